import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { startTestRuntime } from '../../support/embedded';
import {
  deploymentSite,
  groupOf,
  namedNodes,
  namesOf,
  QUICK_POLL,
  runDeployment,
  type DeploymentNodeInput,
  type FinishedDeployment,
} from '../../support/deployment-sites';

/**
 * Independent non-critical groups over disjoint nodes, each at one side of a boundary; the site
 * fails the first `failing` nodes of a group at prepare or at deploy. Every group is submitted
 * whole (parallel, no amount), so a 100-node group is one site action.
 */
interface Case {
  group: string;
  size: number;
  failing: number;
  at: 'prepare' | 'deploy';
  criteria?: Record<string, number>;
}

const CASES: Case[] = [
  { group: 'pct29-prepare-29of100', size: 100, failing: 71, at: 'prepare', criteria: { percent_successful_nodes: 29 } },
  { group: 'pct29-prepare-28of100', size: 100, failing: 72, at: 'prepare', criteria: { percent_successful_nodes: 29 } },
  { group: 'pct29-deploy-29of100', size: 100, failing: 71, at: 'deploy', criteria: { percent_successful_nodes: 29 } },
  { group: 'pct29-deploy-28of100', size: 100, failing: 72, at: 'deploy', criteria: { percent_successful_nodes: 29 } },
  { group: 'pct57-deploy-57of100', size: 100, failing: 43, at: 'deploy', criteria: { percent_successful_nodes: 57 } },
  { group: 'min3-3of5', size: 5, failing: 2, at: 'prepare', criteria: { minimum_successful_nodes: 3 } },
  { group: 'min4-3of5', size: 5, failing: 2, at: 'prepare', criteria: { minimum_successful_nodes: 4 } },
  { group: 'min3-deploy-3of5', size: 5, failing: 2, at: 'deploy', criteria: { minimum_successful_nodes: 3 } },
  { group: 'min4-deploy-3of5', size: 5, failing: 2, at: 'deploy', criteria: { minimum_successful_nodes: 4 } },
  { group: 'maxfail2-2of5', size: 5, failing: 2, at: 'deploy', criteria: { maximum_failed_nodes: 2 } },
  { group: 'maxfail1-2of5', size: 5, failing: 2, at: 'deploy', criteria: { maximum_failed_nodes: 1 } },
  { group: 'maxfail1-prepare-2of5', size: 5, failing: 2, at: 'prepare', criteria: { maximum_failed_nodes: 1 } },
  { group: 'maxfail0-0of3', size: 3, failing: 0, at: 'deploy', criteria: { maximum_failed_nodes: 0 } },
  {
    group: 'all-three-one-misses',
    size: 5,
    failing: 2,
    at: 'deploy',
    criteria: { percent_successful_nodes: 60, minimum_successful_nodes: 4, maximum_failed_nodes: 2 },
  },
  { group: 'none-all-fail', size: 2, failing: 2, at: 'prepare' },
];

const NO_NODE = { node_tags: ['no-node-has-this-tag'] };
const nodesOf = (c: Case): DeploymentNodeInput[] => namedNodes(`${c.group}-`, c.size, (i) => (i < c.failing ? { [c.at]: 'fail' } : undefined));

describe('success criteria at their boundaries, decided exactly', () => {
  let runtime: EmbeddedRuntime;
  let run: FinishedDeployment;
  beforeAll(async () => {
    runtime = await startTestRuntime({ site: deploymentSite(CASES.flatMap(nodesOf)) });
    const groups = [
      ...CASES.map((c) => groupOf(c.group, namesOf(nodesOf(c)), c.criteria ? { success_criteria: c.criteria } : {})),
      // Selectors that pick no node (a tag no node carries: a node name the site lacks is refused): 100% of nothing, but 0 successes.
      { ...groupOf('empty-no-criteria', []), selectors: [NO_NODE] },
      { ...groupOf('empty-pct100', [], { success_criteria: { percent_successful_nodes: 100 } }), selectors: [NO_NODE] },
      // (A minimum above what a group selects can never be met: refused before the run, unreachable-criteria.test.ts.)
      { ...groupOf('empty-maxfail0', [], { success_criteria: { maximum_failed_nodes: 0 } }), selectors: [NO_NODE] },
    ];
    run = await runDeployment(runtime, { strategy: { groups }, ...QUICK_POLL });
    // Hundreds of nodes, each batch taking and giving back its nodes' locks: 14 s of CPU alone, more
    // than 60 s of wall time on a loaded 2-core host. Not a speed check (bench/ is where those live).
  }, 180_000);
  afterAll(() => runtime.close());

  const group = (name: string) => run.report!.groups[name]!;
  const nodeStages = (c: Case) => namesOf(nodesOf(c)).map((node) => run.report!.nodes[node]);

  it('the run succeeds: every group is non-critical', () => {
    expect(run.outcome.status).toBe('SUCCEEDED');
    expect(run.site.violations).toEqual([]);
  });

  it('29 of 100 prepared meets 29% (floating point would make it 28.999...)', () => {
    expect(group('pct29-prepare-29of100')).toMatchObject({ stage: 'DEPLOYED', failures: [] });
  });

  it('28 of 100 prepared misses 29%, and the group is not deployed', () => {
    const c = CASES[1]!;
    expect(group(c.group)).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'percent_successful_nodes', needed: 29, actual: 28 }] });
    for (const node of namesOf(nodesOf(c))) expect(run.site.nodes[node]!.deployCount).toBe(0);
    expect(nodeStages(c).filter((s) => s === 'FAILED')).toHaveLength(72);
    expect(nodeStages(c).filter((s) => s === 'PREPARED')).toHaveLength(28);
  });

  it('29 of 100 deployed meets 29%; 28 of 100 misses it', () => {
    expect(group('pct29-deploy-29of100')).toMatchObject({ stage: 'DEPLOYED', failures: [] });
    expect(group('pct29-deploy-28of100')).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'percent_successful_nodes', needed: 29, actual: 28 }] });
    expect(group('pct57-deploy-57of100')).toMatchObject({ stage: 'DEPLOYED', failures: [] });
  });

  it('minimum_successful_nodes: 3 of 5 meets 3 and misses 4, at prepare and at deploy', () => {
    expect(group('min3-3of5')).toMatchObject({ stage: 'DEPLOYED', failures: [] });
    expect(group('min4-3of5')).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'minimum_successful_nodes', needed: 4, actual: 3 }] });
    expect(group('min3-deploy-3of5')).toMatchObject({ stage: 'DEPLOYED', failures: [] });
    expect(group('min4-deploy-3of5')).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'minimum_successful_nodes', needed: 4, actual: 3 }] });
  });

  it('maximum_failed_nodes: 2 failed meets 2 and misses 1; 0 failed meets 0', () => {
    expect(group('maxfail2-2of5')).toMatchObject({ stage: 'DEPLOYED', failures: [] });
    expect(group('maxfail1-2of5')).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'maximum_failed_nodes', needed: 1, actual: 2 }] });
    expect(group('maxfail1-prepare-2of5')).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'maximum_failed_nodes', needed: 1, actual: 2 }] });
    expect(group('maxfail0-0of3')).toMatchObject({ stage: 'DEPLOYED', failures: [] });
  });

  it('each criterion is judged on its own: one miss fails the group and only it is reported', () => {
    expect(group('all-three-one-misses')).toMatchObject({
      stage: 'FAILED',
      failures: [{ criteria: 'minimum_successful_nodes', needed: 4, actual: 3 }],
    });
  });

  it('no criteria: the group goes on even when every node failed', () => {
    expect(group('none-all-fail')).toMatchObject({ stage: 'DEPLOYED', failures: [] });
    expect(nodeStages(CASES.at(-1)!)).toEqual(['FAILED', 'FAILED']);
  });

  it('a group of no nodes counts as 100% with 0 successes', () => {
    expect(group('empty-no-criteria')).toMatchObject({ stage: 'DEPLOYED', nodes: [] });
    expect(group('empty-pct100')).toMatchObject({ stage: 'DEPLOYED', failures: [] });
    expect(group('empty-maxfail0')).toMatchObject({ stage: 'DEPLOYED', failures: [] });
  });

  it('each group submitted its nodes in one action per phase', () => {
    for (const c of CASES) {
      const runs = run.runs.filter((r) => r.group === c.group);
      expect(new Set(runs.filter((r) => r.phase === 'prepare').map((r) => r.action)).size).toBe(1);
      expect(new Set(runs.filter((r) => r.phase === 'deploy').map((r) => r.action)).size).toBeLessThanOrEqual(1);
    }
  });
});
