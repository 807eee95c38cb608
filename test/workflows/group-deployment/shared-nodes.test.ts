import { startTestRuntime } from '../../support/embedded';
import { deploymentSite, groupOf, QUICK_POLL, runDeployment, type DeploymentNodeInput } from '../../support/deployment-sites';

const min2 = { success_criteria: { minimum_successful_nodes: 2 } };

async function deploy(nodes: DeploymentNodeInput[], groups: Record<string, unknown>[], input: Record<string, unknown> = {}) {
  const runtime = await startTestRuntime({ site: deploymentSite(nodes) });
  try {
    return await runDeployment(runtime, { strategy: { groups }, ...QUICK_POLL, ...input });
  } finally {
    await runtime.close();
  }
}

describe('a node selected by two groups is prepared and deployed once, and counts in both', () => {
  it('is submitted by the first group only, and counts as a success of the second', async () => {
    const nodes = [{ name: 'n0' }, { name: 'shared' }, { name: 'n2' }];
    const groups = [groupOf('g1', ['n0', 'shared'], min2), groupOf('g2', ['shared', 'n2'], { depends_on: ['g1'], ...min2 })];
    const { outcome, report, site, runs } = await deploy(nodes, groups);

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report!.groups['g1']).toMatchObject({ stage: 'DEPLOYED', nodes: ['n0', 'shared'] });
    // g2 submitted only n2, yet meets "2 successful" with the shared node g1 deployed.
    expect(report!.groups['g2']).toMatchObject({ stage: 'DEPLOYED', nodes: ['shared', 'n2'], failures: [] });
    expect(site.nodes['shared']).toMatchObject({ prepareCount: 1, deployCount: 1 });
    expect(runs.filter((r) => r.node === 'shared').map((r) => [r.group, r.phase])).toEqual([
      ['g1', 'prepare'],
      ['g1', 'deploy'],
    ]);
    expect(runs.filter((r) => r.group === 'g2').map((r) => r.node)).toEqual(['n2', 'n2']);
    expect(site.violations).toEqual([]);
  });

  it("a shared node's failure fails both groups, without being submitted again", async () => {
    const nodes = [{ name: 'n0' }, { name: 'shared', faults: { deploy: 'fail' as const } }, { name: 'n2' }];
    const groups = [groupOf('g1', ['n0', 'shared'], min2), groupOf('g2', ['shared', 'n2'], min2)];
    const { outcome, report, site } = await deploy(nodes, groups);

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report!.groups['g1']).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'minimum_successful_nodes', needed: 2, actual: 1 }] });
    expect(report!.groups['g2']).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'minimum_successful_nodes', needed: 2, actual: 1 }] });
    // g2 failed on its own criteria, not because of g1: at its prepare (1 of 2), so n2 was not deployed.
    expect(report!.groups['g2']!.blockedBy).toBeUndefined();
    expect(site.nodes['shared']).toMatchObject({ prepareCount: 1, deployCount: 1 });
    expect(site.nodes['n2']).toMatchObject({ prepareCount: 1, deployCount: 0 });
    expect(report!.nodes).toEqual({ n0: 'DEPLOYED', shared: 'FAILED', n2: 'PREPARED' });
  });

  it('a node picked twice inside one group (two selectors) is one member and one submission', async () => {
    const nodes = [
      { name: 'a1', rack: 'r1', tags: ['control'], labels: { plane: 'on' } },
      { name: 'a2', rack: 'r1', tags: ['compute'] },
      { name: 'a3', rack: 'r2', tags: ['control'] },
      { name: 'a4', rack: 'r2', tags: ['compute'], labels: { plane: 'on' } },
    ];
    const groups = [
      {
        name: 'g',
        critical: true,
        depends_on: [],
        // (rack r1 AND tag control) ∪ (label plane:on) ∪ (name a1): a1 and a4.
        selectors: [{ rack_names: ['r1'], node_tags: ['control'] }, { node_labels: ['plane:on'] }, { node_names: ['a1'] }],
        success_criteria: { minimum_successful_nodes: 2, maximum_failed_nodes: 0 },
      },
    ];
    const { outcome, report, site } = await deploy(nodes, groups);

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report!.groups['g']).toMatchObject({ stage: 'DEPLOYED', nodes: ['a1', 'a4'] });
    expect(Object.fromEntries(Object.entries(site.nodes).map(([n, s]) => [n, [s.prepareCount, s.deployCount]]))).toEqual({
      a1: [1, 1],
      a2: [0, 0],
      a3: [0, 0],
      a4: [1, 1],
    });
  });

  it('a selector with no criteria beside others selects every node', async () => {
    const nodes = [{ name: 'a1' }, { name: 'a2' }, { name: 'a3' }];
    const groups = [groupOf('named', ['a1']), { name: 'all', critical: true, depends_on: ['named'], selectors: [{ node_names: ['a1'] }, {}] }];
    const { outcome, report, site } = await deploy(nodes, groups);

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report!.groups['all']).toMatchObject({ stage: 'DEPLOYED', nodes: ['a1', 'a2', 'a3'] });
    expect(Object.values(site.nodes).map((n) => [n.prepareCount, n.deployCount])).toEqual([
      [1, 1],
      [1, 1],
      [1, 1],
    ]);
  });

  it('a group that runs before the group owning a shared node in the plan is not failed by it', async () => {
    // Plan order (stable topological): ntp, ctl, mon, so `shared` is ctl's to submit. But mon is
    // ready from the start, as ntp is: the run picks [ntp, mon] and deploys mon before ctl.
    const nodes = [{ name: 'ntp-n' }, { name: 'ctl-n' }, { name: 'shared' }];
    const groups = [
      groupOf('ntp', ['ntp-n'], { critical: true }),
      groupOf('ctl', ['ctl-n', 'shared'], { critical: true, depends_on: ['ntp'] }),
      groupOf('mon', ['shared'], { success_criteria: { minimum_successful_nodes: 1 } }),
    ];
    const { outcome, report, site } = await deploy(nodes, groups);

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report!.nodes).toEqual({ 'ntp-n': 'DEPLOYED', 'ctl-n': 'DEPLOYED', shared: 'DEPLOYED' });
    expect(site.nodes['shared']).toMatchObject({ prepareCount: 1, deployCount: 1 });
    // mon's only node deployed fine: mon must not be FAILED (it was judged while `shared` was NOT_STARTED).
    expect(report!.groups['mon']).toMatchObject({ stage: 'DEPLOYED', failures: [] });
  });

  it('with maxParallelGroups 2, a group is not judged on a shared node the other running group has not finished', async () => {
    const nodes = [{ name: 'a1' }, { name: 'a2' }, { name: 'shared' }, { name: 'b1' }];
    const groups = [
      // a submits shared last, one node at a time; b (all at once) is done with b1 long before.
      groupOf('a', ['a1', 'a2', 'shared'], { strategy: { type: 'one_by_one' } }),
      groupOf('b', ['shared', 'b1'], min2),
    ];
    const { outcome, report, site } = await deploy(nodes, groups, { maxParallelGroups: 2 });

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report!.nodes).toEqual({ a1: 'DEPLOYED', a2: 'DEPLOYED', shared: 'DEPLOYED', b1: 'DEPLOYED' });
    expect(site.nodes['shared']).toMatchObject({ prepareCount: 1, deployCount: 1 });
    expect(report!.groups['b']).toMatchObject({ stage: 'DEPLOYED', failures: [] });
  });
});
