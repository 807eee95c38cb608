import {
  nextTaskStarts,
  parseTaskGraph,
  planTaskGraph,
  recordTaskOutcome,
  startTaskRun,
  taskRunPolicy,
  taskRunReport,
  type TaskStart,
} from '../../../core/task-graph';
import type { Observations, ScheduleState } from '../../../core/scheduling';
import { EXAMPLE_GRAPH, EXAMPLE_NODES } from './fixtures';

const plan = planTaskGraph(parseTaskGraph(EXAMPLE_GRAPH), EXAMPLE_NODES);

/** Drives a run to its end, each started task ending at the next pass with the outcome `outcomeOf` gives. */
function drive(
  maxInTransition: number,
  outcomeOf: (start: TaskStart) => { ok: true } | { ok: false; error: string },
  observations: Observations = { nodes: {} },
) {
  const policy = taskRunPolicy(plan, maxInTransition);
  let state: ScheduleState = startTaskRun(plan);
  let widest = 0;
  for (let now = 0; now < 100; now++) {
    const pass = nextTaskStarts(state, policy, now, observations);
    state = pass.state;
    if (pass.finished) return { state, widest };
    widest = Math.max(widest, pass.starts.length);
    for (const start of pass.starts) state = recordTaskOutcome(state, start.op, outcomeOf(start), now);
  }
  throw new Error('the run did not finish');
}

describe('running a task plan on the annealer', () => {
  it('succeeds with every node task ACTIVE', () => {
    const { state } = drive(100, () => ({ ok: true }));
    const report = taskRunReport(state);
    expect(report.status).toBe('succeeded');
    expect(report.nodes['node-8']).toEqual({ setup_network: 'ACTIVE', setup_services: 'ACTIVE' });
    expect(Object.keys(report.nodes)).toHaveLength(8);
  });

  it('a failed task blocks its node and the dependants on other nodes, and says why', () => {
    const { state } = drive(100, ({ op }) => (op === 'node-7/setup_network' ? { ok: false, error: 'exit status 1' } : { ok: true }));
    const report = taskRunReport(state);
    expect(report.status).toBe('failed');
    expect(report.nodes['node-7']).toEqual({ setup_network: 'ERROR', setup_services: 'BLOCKED' });
    expect(report.nodes['node-6']).toEqual({ setup_network: 'ACTIVE', setup_services: 'ACTIVE' });
    expect(report.nodes['node-8']).toEqual({ setup_network: 'BLOCKED', setup_services: 'BLOCKED' });
    expect(report.errors).toEqual({ 'node-7': { setup_network: 'exit status 1' } });
    expect(report.blocked).toEqual({
      'node-7': { setup_services: ['node-7/setup_network'] },
      'node-8': { setup_network: ['node-7/setup_network'], setup_services: ['node-7/setup_network'] },
    });
  });

  it('keeps to the global cap', () => {
    expect(drive(1, () => ({ ok: true })).widest).toBe(1);
    expect(drive(100, () => ({ ok: true })).widest).toBe(2);
  });

  it('leaves a node that is not alive alone, and its dependants', () => {
    const { state } = drive(100, () => ({ ok: true }), { nodes: { 'node-7': { alive: false } } });
    const report = taskRunReport(state);
    expect(report.status).toBe('failed');
    expect(report.leftAlone['node-7']).toEqual({ setup_network: 'node-not-alive', setup_services: 'waiting for ops left alone' });
    expect(report.nodes['node-6']).toEqual({ setup_network: 'ACTIVE', setup_services: 'ACTIVE' });
    expect(report.leftAlone['node-8']).toEqual({ setup_network: 'waiting for ops left alone', setup_services: 'waiting for ops left alone' });
  });
});
