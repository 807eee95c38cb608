import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { startTestRuntime } from '../../support/embedded';
import {
  deploymentSite,
  groupOf,
  maxInFlight,
  namedNodes,
  namesOf,
  QUICK_POLL,
  runDeployment,
  spanOf,
  type DeploymentNodeRun,
} from '../../support/deployment-sites';

/**
 * One site for every case; each deployment picks its nodes by name and is judged on its own runs.
 * On virtual time the batches of a window all start at the same simulated instant, however long
 * the engine takes to start them, so the counts below are exact.
 */
const NODES = namedNodes('n', 60);
const TIMING = { prepareSeconds: 60, deploySeconds: 60 };
const first = (count: number, from = 0) => namesOf(NODES.slice(from, from + count));

const phase = (runs: readonly DeploymentNodeRun[], name: 'prepare' | 'deploy') => runs.filter((r) => r.phase === name);
const actionsOf = (runs: readonly DeploymentNodeRun[]) => new Set(runs.map((r) => r.action)).size;
const overlap = (a: { from: number; to: number }, b: { from: number; to: number }) => a.from < b.to && b.from < a.to;

describe('how many nodes and groups are in flight at once', () => {
  let runtime: EmbeddedRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ site: deploymentSite(NODES, TIMING) });
  });
  afterAll(() => runtime.close());

  async function deploy(groups: Record<string, unknown>[], input: Record<string, unknown> = {}) {
    const run = await runDeployment(runtime, { strategy: { groups }, ...QUICK_POLL, ...input });
    expect(run.outcome.status).toBe('SUCCEEDED');
    expect(Object.values(run.report!.nodes).every((stage) => stage === 'DEPLOYED')).toBe(true);
    expect(run.site.violations).toEqual([]);
    return run;
  }

  it('one_by_one: never two nodes of the group in flight, one action per node and phase', async () => {
    const { runs } = await deploy([groupOf('g', first(5), { strategy: { type: 'one_by_one' } })]);

    for (const name of ['prepare', 'deploy'] as const) {
      expect(phase(runs, name).map((r) => r.node)).toEqual(first(5));
      expect(maxInFlight(phase(runs, name))).toBe(1);
      expect(actionsOf(phase(runs, name))).toBe(5);
    }
    expect(maxInFlight(runs)).toBe(1);
  });

  it('parallel amount 3: never more than 3 at once, and really 3 at once', async () => {
    const { runs } = await deploy([groupOf('g', first(8), { strategy: { type: 'parallel', amount: 3 } })]);

    for (const name of ['prepare', 'deploy'] as const) {
      expect(phase(runs, name)).toHaveLength(8);
      expect(maxInFlight(phase(runs, name))).toBe(3);
    }
    expect(maxInFlight(runs)).toBe(3);
  });

  it('parallel without an amount: the whole group in one action per phase', async () => {
    const { runs } = await deploy([groupOf('g', first(6), { strategy: { type: 'parallel' } })]);

    for (const name of ['prepare', 'deploy'] as const) {
      expect(actionsOf(phase(runs, name))).toBe(1);
      expect(phase(runs, name).map((r) => r.node)).toEqual(first(6));
      expect(maxInFlight(phase(runs, name))).toBe(6);
    }
  });

  it('no strategy in a group means parallel without an amount', async () => {
    const { runs } = await deploy([groupOf('g', first(4))]);

    expect(actionsOf(phase(runs, 'prepare'))).toBe(1);
    expect(actionsOf(phase(runs, 'deploy'))).toBe(1);
  });

  it('a group deploys only after its whole prepare phase ended', async () => {
    const { runs } = await deploy([groupOf('g', first(6), { strategy: { type: 'parallel', amount: 2 } })]);

    expect(spanOf(phase(runs, 'deploy')).from).toBeGreaterThanOrEqual(spanOf(phase(runs, 'prepare')).to);
  });

  it('maxParallelGroups 2: two independent groups run at the same time, never three', async () => {
    const oneByOne = { strategy: { type: 'one_by_one' } };
    const { runs } = await deploy([groupOf('a', first(3, 0), oneByOne), groupOf('b', first(3, 3), oneByOne), groupOf('c', first(3, 6), oneByOne)], {
      maxParallelGroups: 2,
    });
    const a = runs.filter((r) => r.group === 'a');
    const b = runs.filter((r) => r.group === 'b');

    expect(overlap(spanOf(a), spanOf(b))).toBe(true);
    expect(maxInFlight([...a, ...b])).toBe(2);
    expect(maxInFlight(runs)).toBe(2);
  });

  it('by default (maxParallelGroups 1) groups never overlap', async () => {
    const { runs, record } = await deploy([groupOf('a', first(3, 0)), groupOf('b', first(3, 3)), groupOf('c', first(3, 6))]);

    expect(record!.settings.maxParallelGroups).toBe(1);
    const spans = ['a', 'b', 'c'].map((group) => spanOf(runs.filter((r) => r.group === group)));
    expect(overlap(spans[0]!, spans[1]!)).toBe(false);
    expect(overlap(spans[0]!, spans[2]!)).toBe(false);
    expect(overlap(spans[1]!, spans[2]!)).toBe(false);
    // In plan (document) order.
    expect(spans[0]!.to).toBeLessThanOrEqual(spans[1]!.from);
    expect(spans[1]!.to).toBeLessThanOrEqual(spans[2]!.from);
  });
});

describe('a window wider than the 40 iterations of an inline Map', () => {
  it('parallel amount 50 runs 50 nodes at once, never more', async () => {
    const runtime = await startTestRuntime({ site: deploymentSite(NODES, TIMING) });
    try {
      const { outcome, runs } = await runDeployment(runtime, {
        strategy: { groups: [groupOf('g', first(60), { strategy: { type: 'parallel', amount: 50 } })] },
        ...QUICK_POLL,
      });

      expect(outcome.status).toBe('SUCCEEDED');
      for (const name of ['prepare', 'deploy'] as const) {
        expect(phase(runs, name)).toHaveLength(60);
        expect(maxInFlight(phase(runs, name))).toBe(50);
        // 50 at once, then the last 10 as the first ones end: exactly two waves.
        expect(new Set(phase(runs, name).map((r) => r.startedAt)).size).toBe(2);
      }
    } finally {
      await runtime.close();
    }
  });
});
