import type { ExecutionOutcome } from '../../local/local-step-functions';
import { buildDeploymentReport, type DeploymentReport } from '../../control-plane/reports/deployment-report';
import type { SiteDefinitionInput, SiteState } from '../../simulator';
import type { ProvisionNodeRun } from '../../simulator/models/provisioner';
import { randomStream, type Random } from '../../simulator/seeded-random';
import { runRecordedScenario, type OperatorRecord, type RecordedScenario } from './run-scenario';
import type { OperatorAction } from './scenario';

/**
 * A group-deployment scenario: a DeploymentStrategy of 2-4 groups drawn from a seed (each selecting
 * its nodes by name, one at a time or in parallel, critical or not, with or without success
 * criteria, depending on earlier groups), the site's nodes (prepares and deploys that fail or hang,
 * nodes in no group, a failing provisioner call) and an operator's stop, stop then resume, cancel,
 * or kill then resume at a random moment; run on the embedded engine against the simulator.
 */
export interface DeploymentNode {
  name: string;
  /** The group that selects it; undefined: in no group, never to be touched. */
  group?: string;
  /** Later groups that select it too (a node shared by groups is prepared and deployed once, by the first to reach it). */
  alsoIn?: string[];
  prepareFault?: 'fail' | 'hang';
  deployFault?: 'fail' | 'hang';
}

export interface DeploymentGroupDraw {
  name: string;
  critical: boolean;
  dependsOn: string[];
  strategy: { type: 'one_by_one' } | { type: 'parallel'; amount?: number };
  successCriteria?: { percent_successful_nodes?: number; minimum_successful_nodes?: number; maximum_failed_nodes?: number };
}

export interface DeploymentScenario {
  seed: number;
  workflow: 'group-deployment';
  nodes: DeploymentNode[];
  groups: DeploymentGroupDraw[];
  timing: { prepareSeconds: number; deploySeconds: number };
  apiFaults: NonNullable<SiteDefinitionInput['apiFaults']>;
  request: { strategy: { groups: Record<string, unknown>[] }; pollIntervalSeconds: number; prepareTimeoutSeconds: number; deployTimeoutSeconds: number };
  operator: OperatorAction[];
}

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const chance = (random: Random, p: number) => random() < p;

export function generateDeploymentScenario(seed: number): DeploymentScenario {
  const random = randomStream(seed, 'deployment-scenario');
  const timing = { prepareSeconds: int(random, 10, 60), deploySeconds: int(random, 20, 120) };
  const groups: DeploymentGroupDraw[] = [];
  const nodes: DeploymentNode[] = [];
  const groupCount = int(random, 2, 4);
  for (let g = 0; g < groupCount; g++) {
    const name = `g${g}`;
    const dependsOn = groups.map((x) => x.name).filter(() => chance(random, 0.4));
    const strategy = chance(random, 0.5)
      ? { type: 'one_by_one' as const }
      : chance(random, 0.5)
        ? { type: 'parallel' as const }
        : { type: 'parallel' as const, amount: int(random, 1, 2) };
    const group: DeploymentGroupDraw = { name, critical: chance(random, 0.4), dependsOn, strategy };
    const criteria = pick(random, ['none', 'percent', 'minimum', 'maximum-failed'] as const);
    const size = int(random, 1, 4);
    if (criteria === 'percent') group.successCriteria = { percent_successful_nodes: pick(random, [50, 75, 100]) };
    if (criteria === 'minimum') group.successCriteria = { minimum_successful_nodes: int(random, 1, size) };
    if (criteria === 'maximum-failed') group.successCriteria = { maximum_failed_nodes: int(random, 0, 1) };
    groups.push(group);
    // A node of an earlier group selected again.
    const earlier = nodes.filter((n) => n.group !== undefined);
    if (earlier.length > 0 && chance(random, 0.2)) {
      const shared = pick(random, earlier);
      shared.alsoIn = [...(shared.alsoIn ?? []), name];
    }
    for (let i = 0; i < size; i++) {
      const node: DeploymentNode = { name: `${name}n${i}`, group: name };
      const faulty = random();
      if (faulty < 0.1) node.prepareFault = chance(random, 0.8) ? 'fail' : 'hang';
      else if (faulty < 0.19) node.deployFault = chance(random, 0.8) ? 'fail' : 'hang';
      nodes.push(node);
    }
  }
  for (let i = int(random, 0, 2); i > 0; i--) nodes.push({ name: `spare${i}` });
  const apiFaults: DeploymentScenario['apiFaults'] = [];
  if (chance(random, 0.2))
    apiFaults.push({ service: 'provisioner', status: pick(random, [500, 503]), count: int(random, 1, 2), afterCalls: int(random, 0, 15) });
  const operator: OperatorAction[] = [];
  if (chance(random, 0.5)) {
    const kind = pick(random, ['stop', 'stop', 'cancel', 'kill'] as const);
    operator.push({ kind, atSeconds: int(random, 0, 400), ...(kind === 'cancel' ? {} : { resume: kind === 'kill' || chance(random, 0.7) }) });
  }
  return {
    seed,
    workflow: 'group-deployment',
    nodes,
    groups,
    timing,
    apiFaults,
    request: {
      strategy: {
        groups: groups.map((g) => ({
          name: g.name,
          critical: g.critical,
          depends_on: g.dependsOn,
          selectors: [{ node_names: nodes.filter((n) => n.group === g.name || n.alsoIn?.includes(g.name)).map((n) => n.name) }],
          strategy: g.strategy,
          ...(g.successCriteria ? { success_criteria: g.successCriteria } : {}),
        })),
      },
      pollIntervalSeconds: pick(random, [10, 30]),
      prepareTimeoutSeconds: timing.prepareSeconds * 4 + int(random, 60, 300),
      deployTimeoutSeconds: timing.deploySeconds * 4 + int(random, 60, 300),
    },
    operator,
  };
}

export function deploymentScenarioSite(s: DeploymentScenario): SiteDefinitionInput {
  return {
    nodes: s.nodes.map((n, i) => ({
      name: n.name,
      nid: i + 1,
      faults: { ...(n.prepareFault ? { prepare: n.prepareFault } : {}), ...(n.deployFault ? { deploy: n.deployFault } : {}) },
    })),
    timing: s.timing,
    apiFaults: s.apiFaults,
  };
}

export function describeDeploymentScenario(s: DeploymentScenario): string {
  const groups = s.groups.map((g) => {
    const members = s.nodes.filter((n) => n.group === g.name || n.alsoIn?.includes(g.name));
    const faults = members
      .filter((n) => n.prepareFault || n.deployFault)
      .map((n) => `${n.name}:${n.prepareFault ? `prepare ${n.prepareFault}` : `deploy ${n.deployFault}`}`);
    return `${g.name}[${members.length}${g.critical ? ' critical' : ''} ${g.strategy.type}${'amount' in g.strategy && g.strategy.amount ? `/${g.strategy.amount}` : ''}${g.dependsOn.length ? ` after ${g.dependsOn.join('+')}` : ''}${g.successCriteria ? ` ${JSON.stringify(g.successCriteria)}` : ''}${faults.length ? ` ${faults.join(' ')}` : ''}]`;
  });
  return [
    `seed ${s.seed}: group deployment ${groups.join(' ')}`,
    `spares ${s.nodes.filter((n) => n.group === undefined).length}; poll ${s.request.pollIntervalSeconds}`,
    s.apiFaults.length ? `api faults ${s.apiFaults.map((f) => `${f.service}:${f.status}x${f.count}@${f.afterCalls}`).join(',')}` : '',
    s.operator.length ? `operator ${s.operator.map((a) => `${a.kind}@${a.atSeconds}s${a.resume ? '+resume' : ''}`).join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

export interface DeploymentScenarioRun {
  scenario: DeploymentScenario;
  deploymentId: string;
  outcomes: ExecutionOutcome[];
  report?: DeploymentReport;
  status?: string;
  exitStatus: number;
  site: SiteState;
  /** The provisioner's node runs of this deployment (simulated epoch ms), with the group and phase its action names. */
  runs: (ProvisionNodeRun & { group: string; phase: 'prepare' | 'deploy' })[];
  lockOwners: Map<string, string>;
  operator: OperatorRecord[];
  budgetExceeded?: string;
  /** Simulated epoch ms at the start (the node runs are in the same time). */
  startedAt: number;
  simulatedSeconds: number;
  realMs: number;
}

const DEPLOYMENT_MACHINES = ['GroupDeployment', 'DeployGroup', 'RunNodeBatches', 'TaskGraph'] as const;

export async function runDeploymentScenario(scenario: DeploymentScenario, simulatedBudgetSeconds = 86400): Promise<DeploymentScenarioRun> {
  const deployment: RecordedScenario = {
    site: deploymentScenarioSite(scenario),
    nodes: scenario.nodes,
    operator: scenario.operator,
    start: (runtime) => runtime.run('groupDeployment', scenario.request),
    statusBefore: async (runtime, id) => (await runtime.deployments.getDeployment(id))?.status,
    answer: (runtime, id, action, kill) => (action.kind === 'stop' ? runtime.stop(id) : action.kind === 'cancel' ? runtime.cancel(id) : kill()),
    // kill -9: every execution of the deployment's machines ends without a word.
    kill: async (runtime) => {
      for (const name of DEPLOYMENT_MACHINES)
        for (const e of runtime.engine.listExecutions(runtime.stateMachineArns[name]))
          if (e.status === 'RUNNING') await runtime.engine.stop(e.executionArn, 'ProcessDied');
    },
    resume: (runtime, id, resumes) => runtime.run('groupDeployment', { resumeDeploymentId: id }, `${id}-resume-${resumes}`),
  };
  return runRecordedScenario(deployment, simulatedBudgetSeconds, async (runtime, deploymentId, start) => {
    const record = await runtime.deployments.getDeployment(deploymentId);
    const report = record ? await buildDeploymentReport(runtime.deployments, record) : undefined;
    const prefix = `deploy-${deploymentId}-`;
    const runs = runtime.simulator.simulator.provisioner.nodeRuns().flatMap((r) => {
      const parts = r.action.startsWith(prefix) ? /^(.*)-(prepare|deploy)-(\d+)$/.exec(r.action.slice(prefix.length)) : null;
      return parts ? [{ ...r, group: parts[1]!, phase: parts[2] as 'prepare' | 'deploy' }] : [];
    });
    return {
      scenario,
      deploymentId,
      ...(report ? { report } : {}),
      ...(record ? { status: record.status } : {}),
      exitStatus: record?.status === 'SUCCEEDED' ? 0 : 1,
      runs,
      startedAt: start,
    };
  });
}
