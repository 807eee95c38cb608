import { performance } from 'node:perf_hooks';
import { EmbeddedRuntime } from '../local/embedded-runtime';
import { parseSiteDefinition } from '../simulator';
import { summarizeExecutions, type BenchFigures } from './figures';

export interface TaskGraphScenario {
  name: string;
  nodes: number;
  /** Compute nodes deployed together (the compute group's `parallel` amount); the run's global cap is twice it. */
  amount: number;
}

/**
 * Four controllers two at a time, then the compute nodes in chunks of `amount`; setup_network then
 * setup_services on each; the last node fails setup_network (a failure blocks the chunks after its own).
 */
function scenarioInput(s: TaskGraphScenario) {
  const nodes = Array.from({ length: s.nodes }, (_, i) => ({
    name: `nid${String(i + 1).padStart(5, '0')}`,
    nid: i + 1,
    roles: [i < 4 ? 'controller' : 'compute'],
    ...(i === s.nodes - 1 ? { faults: { tasks: { setup_network: 'fail' as const } } } : {}),
  }));
  const site = parseSiteDefinition({ nodes, timing: { taskSeconds: 60 } });
  const graph = `
tasks:
  - {id: controller, type: group, role: [controller], parameters: {strategy: {type: parallel, amount: 2}}}
  - {id: compute, type: group, role: [compute], requires: [controller], parameters: {strategy: {type: parallel, amount: ${s.amount}}}}
  - {id: setup_network, type: shell, groups: ['*'], parameters: {cmd: /opt/setup_network.sh, timeout: 300}}
  - {id: setup_services, type: puppet, groups: ['*'], requires: [setup_network], parameters: {puppet_manifest: /etc/puppet/site.pp, timeout: 900}}
`;
  return { site, input: { graph, maxInTransition: 2 * s.amount, pollIntervalSeconds: 30 } };
}

/** The whole stack on virtual time: the TaskGraph workflow, its activities, dynalite, the simulated head node running pdsh over SSM. */
export async function benchTaskGraph(s: TaskGraphScenario): Promise<BenchFigures & { makespanSeconds: number; chunks: number; taskRuns: number }> {
  const { site, input } = scenarioInput(s);
  const runtime = await EmbeddedRuntime.start({ site });
  try {
    const started = performance.now();
    const run = await runtime.run('taskGraph', input);
    const outcome = await run.outcome;
    const wallSeconds = (performance.now() - started) / 1000;
    const record = await runtime.taskRuns.getRun(run.id);
    const taskLog = runtime.simulator.state().taskLog;
    return {
      scenario: s.name,
      outcome: `${outcome.status} (${record?.status}): ${record?.counts.ACTIVE} tasks active, ${record?.counts.ERROR} failed, ${record?.counts.BLOCKED} blocked`,
      nodes: s.nodes,
      wallSeconds,
      dynamoDbRequests: runtime.dynamoDbRequests.total,
      makespanSeconds: record?.finishedAt !== undefined ? (record.finishedAt - record.startedAt) / 1000 : NaN,
      chunks: record?.chunkCount ?? 0,
      taskRuns: taskLog.length,
      ...summarizeExecutions(runtime.engine.executions),
    };
  } finally {
    await runtime.close();
  }
}
