import type { ExecutionOutcome } from '../../local/local-step-functions';
import type { TaskRunView } from '../../control-plane/reports/task-run-report';
import type { SiteDefinitionInput, SiteState } from '../../simulator';
import { randomStream, type Random } from '../../simulator/seeded-random';
import { runRecordedScenario, type OperatorRecord, type RecordedScenario } from './run-scenario';
import { ADMIN_REASONS, type OperatorAction } from './scenario';

/**
 * A task-graph scenario: a drain/reboot/resume graph over the `compute` role drawn from a seed (its
 * strategy, `maxInTransition`, poll, reboot timeout), the site's nodes (busy, admin-drained, failing
 * or hanging boots, nodes that never return, nodes of another role outside the graph, failing site
 * calls) and an operator's stop, stop then resume, cancel, or kill then resume at a random moment.
 * Run on the embedded engine against the simulator on virtual time, as the upgrade scenarios are.
 */
export interface TaskGraphNode {
  name: string;
  /** Of role `compute` (the graph's); outside: role `other`, never to be touched. */
  inGraph: boolean;
  busySeconds?: number;
  adminDrain?: string;
  bootFault?: 'fail' | 'hang';
  neverReturns?: boolean;
}

export interface TaskGraphScenario {
  seed: number;
  workflow: 'task-graph';
  slurmVersion: string;
  nodes: TaskGraphNode[];
  timing: { bootSeconds: number; returnSeconds: number };
  apiFaults: NonNullable<SiteDefinitionInput['apiFaults']>;
  strategy: 'parallel' | 'one_by_one';
  rebootTimeoutSeconds: number;
  /** The workflow's input (graph, maxInTransition, pollIntervalSeconds). */
  request: { graph: string; maxInTransition?: number; pollIntervalSeconds: number };
  operator: OperatorAction[];
}

/** The tasks of every drawn graph, in their order on a node. */
export const GRAPH_TASKS = ['drain_compute', 'reboot_compute', 'resume_compute'] as const;

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const chance = (random: Random, p: number) => random() < p;

export function generateTaskGraphScenario(seed: number): TaskGraphScenario {
  const random = randomStream(seed, 'task-graph-scenario');
  const count = int(random, 2, 6);
  const outside = int(random, 0, 2);
  const timing = { bootSeconds: int(random, 20, 120), returnSeconds: int(random, 5, 30) };
  const rebootTimeoutSeconds = timing.bootSeconds + timing.returnSeconds + int(random, 120, 600);
  const nodes: TaskGraphNode[] = [];
  for (let i = 0; i < count + outside; i++) {
    const node: TaskGraphNode = { name: `c${String(i).padStart(2, '0')}`, inGraph: i < count };
    // Jobs that end well within the reboot's timeout (a drain has the task's default timeout).
    if (chance(random, 0.3)) node.busySeconds = int(random, 20, 600);
    if (chance(random, 0.12)) node.adminDrain = pick(random, ADMIN_REASONS);
    if (chance(random, 0.1)) node.bootFault = chance(random, 0.7) ? 'fail' : 'hang';
    else if (chance(random, 0.06)) node.neverReturns = true;
    nodes.push(node);
  }
  const strategy = chance(random, 0.5) ? 'parallel' : 'one_by_one';
  const graph = [
    'tasks:',
    `  - {id: compute, type: group, role: [compute], parameters: {strategy: {type: ${strategy}}}}`,
    `  - {id: drain_compute, type: drain, groups: [compute], parameters: {reason: ${pick(random, ['kernel update', 'firmware'])}}}`,
    `  - {id: reboot_compute, type: reboot, groups: [compute], requires: [drain_compute], parameters: {template: img-2, timeout: ${rebootTimeoutSeconds}}}`,
    '  - {id: resume_compute, type: resume, groups: [compute], requires: [reboot_compute]}',
    '',
  ].join('\n');
  const request: TaskGraphScenario['request'] = { graph, pollIntervalSeconds: pick(random, [10, 30]) };
  if (chance(random, 0.75)) request.maxInTransition = int(random, 1, 3);
  const apiFaults: TaskGraphScenario['apiFaults'] = [];
  if (chance(random, 0.25))
    apiFaults.push({
      service: pick(random, ['workload-manager', 'boot-service', 'inventory'] as const),
      status: pick(random, [500, 503]),
      count: int(random, 1, 2),
      afterCalls: int(random, 0, 20),
    });
  const operator: OperatorAction[] = [];
  if (chance(random, 0.5)) {
    const kind = pick(random, ['stop', 'stop', 'cancel', 'kill'] as const);
    operator.push({ kind, atSeconds: int(random, 0, 600), ...(kind === 'cancel' ? {} : { resume: kind === 'kill' || chance(random, 0.7) }) });
  }
  if (chance(random, 0.15))
    operator.push({
      kind: 'admin-drain',
      atSeconds: int(random, 0, 600),
      node: pick(
        random,
        nodes.filter((n) => n.inGraph),
      ).name,
      reason: pick(random, ADMIN_REASONS),
    });
  operator.sort((a, b) => a.atSeconds - b.atSeconds);
  return {
    seed,
    workflow: 'task-graph',
    slurmVersion: pick(random, ['24.11.5', '26.05.0']),
    nodes,
    timing,
    apiFaults,
    strategy,
    rebootTimeoutSeconds,
    request,
    operator,
  };
}

export function taskGraphSite(scenario: TaskGraphScenario): SiteDefinitionInput {
  return {
    nodes: scenario.nodes.map((n, i) => {
      const busy = n.busySeconds !== undefined;
      return {
        name: n.name,
        nid: i + 1,
        roles: [n.inGraph ? 'compute' : 'other'],
        wlm: {
          state: n.adminDrain !== undefined ? (busy ? 'DRAINING' : 'DRAINED') : busy ? 'ALLOCATED' : 'IDLE',
          ...(busy ? { busySeconds: n.busySeconds } : {}),
          ...(n.adminDrain !== undefined ? { reason: n.adminDrain } : {}),
        },
        faults: { ...(n.bootFault ? { boot: n.bootFault } : {}), ...(n.neverReturns ? { returnToService: 'never' as const } : {}) },
      };
    }),
    bootTemplates: ['img-1', 'img-2'],
    timing: scenario.timing,
    apiFaults: scenario.apiFaults,
    slurm: { version: scenario.slurmVersion },
  };
}

export function describeTaskGraphScenario(s: TaskGraphScenario): string {
  const site = s.nodes
    .filter((n) => n.busySeconds !== undefined || n.adminDrain !== undefined || n.bootFault || n.neverReturns || !n.inGraph)
    .map(
      (n) =>
        `${n.name}${n.inGraph ? '' : '(outside)'}:` +
        [
          n.busySeconds !== undefined ? `busy ${n.busySeconds}` : '',
          n.adminDrain !== undefined ? `admin '${n.adminDrain}'` : '',
          n.bootFault ? `boot ${n.bootFault}` : '',
          n.neverReturns ? 'never returns' : '',
        ]
          .filter(Boolean)
          .join(','),
    );
  return [
    `seed ${s.seed}: task graph drain/reboot/resume, Slurm ${s.slurmVersion}, ${s.nodes.filter((n) => n.inGraph).length} nodes`,
    `strategy=${s.strategy} maxInTransition=${s.request.maxInTransition ?? 'none'} poll=${s.request.pollIntervalSeconds} rebootTimeout=${s.rebootTimeoutSeconds}`,
    site.length ? `site ${site.join(' ')}` : '',
    s.apiFaults.length ? `api faults ${s.apiFaults.map((f) => `${f.service}:${f.status}x${f.count}@${f.afterCalls}`).join(',')}` : '',
    s.operator.length
      ? `operator ${s.operator.map((a) => `${a.kind}@${a.atSeconds}s${a.node ? ` ${a.node} '${a.reason}'` : ''}${a.resume ? '+resume' : ''}`).join(', ')}`
      : '',
  ]
    .filter(Boolean)
    .join('; ');
}

export interface TaskGraphRun {
  scenario: TaskGraphScenario;
  runId: string;
  outcomes: ExecutionOutcome[];
  view?: TaskRunView;
  /** The run's own record status at the end (RUNNING, STOPPING, STOPPED, SUCCEEDED, FAILED, CANCELLED...). */
  status?: string;
  exitStatus: number;
  site: SiteState;
  lockOwners: Map<string, string>;
  operator: OperatorRecord[];
  budgetExceeded?: string;
  simulatedSeconds: number;
  realMs: number;
}

/** Runs a task-graph scenario to its end (each resume included) with the operator's action at its moment. */
export async function runTaskGraphScenario(scenario: TaskGraphScenario, simulatedBudgetSeconds = 86400): Promise<TaskGraphRun> {
  const taskRun: RecordedScenario = {
    site: taskGraphSite(scenario),
    nodes: scenario.nodes,
    operator: scenario.operator,
    start: (runtime) => runtime.run('taskGraph', scenario.request),
    statusBefore: async (runtime, id) => ((await runtime.taskRuns.getRun(id)) as { status?: string } | undefined)?.status,
    answer: (runtime, id, action, kill) =>
      action.kind === 'stop'
        ? runtime.stop(id)
        : action.kind === 'cancel'
          ? runtime.cancel(id)
          : action.kind === 'admin-drain'
            ? Promise.resolve(runtime.simulator.simulator.workloadManager.drain(action.node!, action.reason!))
            : kill(),
    kill: async (runtime) => {
      const running = runtime.engine.listExecutions(runtime.stateMachineArns.TaskGraph).filter((e) => e.status === 'RUNNING');
      await Promise.all(running.map((e) => runtime.engine.stop(e.executionArn)));
    },
    resume: (runtime, id, resumes) => runtime.run('taskGraph', { resumeRunId: id }, `${id}-resume-${resumes}`),
  };
  return runRecordedScenario(taskRun, simulatedBudgetSeconds, async (runtime, runId) => {
    const view = await runtime.taskRun(runId);
    const record = (await runtime.taskRuns.getRun(runId)) as { status?: string } | undefined;
    const status = record?.status;
    return {
      scenario,
      runId,
      ...(view ? { view } : {}),
      ...(status ? { status } : {}),
      exitStatus: status === 'SUCCEEDED' ? 0 : 1,
    };
  });
}
