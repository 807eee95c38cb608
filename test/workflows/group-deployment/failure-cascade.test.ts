import { startTestRuntime } from '../../support/embedded';
import { deploymentSite, groupOf, QUICK_POLL, runDeployment, spanOf, type DeploymentNodeInput } from '../../support/deployment-sites';

const ok = (name: string): DeploymentNodeInput => ({ name });
const failsPrepare = (name: string): DeploymentNodeInput => ({ name, faults: { prepare: 'fail' } });
const failsDeploy = (name: string): DeploymentNodeInput => ({ name, faults: { deploy: 'fail' } });

/** Each group selects one node, named after it; `min1` makes that node's failure fail the group. */
const min1 = { success_criteria: { minimum_successful_nodes: 1 } };

async function deploy(nodes: DeploymentNodeInput[], groups: Record<string, unknown>[]) {
  const runtime = await startTestRuntime({ site: deploymentSite(nodes) });
  try {
    return await runDeployment(runtime, { strategy: { groups }, ...QUICK_POLL });
  } finally {
    await runtime.close();
  }
}

describe('a failed group fails every group that depends on it; the others go on', () => {
  it('through a chain and a diamond; failed non-critical groups do not fail the run', async () => {
    const nodes = [
      failsPrepare('chain-a-n'),
      ok('chain-b-n'),
      ok('chain-c-n'),
      ok('top-n'),
      failsDeploy('left-n'),
      ok('right-n'),
      ok('bottom-n'),
      ok('alone-n'),
    ];
    const groups = [
      groupOf('chain-c', ['chain-c-n'], { depends_on: ['chain-b'] }),
      groupOf('chain-b', ['chain-b-n'], { depends_on: ['chain-a'] }),
      groupOf('chain-a', ['chain-a-n'], min1),
      groupOf('top', ['top-n']),
      groupOf('left', ['left-n'], { depends_on: ['top'], ...min1 }),
      groupOf('right', ['right-n'], { depends_on: ['top'] }),
      groupOf('bottom', ['bottom-n'], { depends_on: ['left', 'right'] }),
      groupOf('alone', ['alone-n']),
    ];
    const { outcome, report, site } = await deploy(nodes, groups);

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report!.status).toBe('SUCCEEDED');
    expect(report!.criticalGroupsFailed).toBe(false);
    const g = report!.groups;
    expect(g['chain-a']).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'minimum_successful_nodes', needed: 1, actual: 0 }] });
    expect(g['chain-a']!.blockedBy).toBeUndefined();
    // Blocked groups name the group that failed (the root, also two levels down) and miss no criteria themselves.
    expect(g['chain-b']).toEqual({ stage: 'FAILED', critical: false, nodes: ['chain-b-n'], failures: [], blockedBy: 'chain-a' });
    expect(g['chain-c']).toEqual({ stage: 'FAILED', critical: false, nodes: ['chain-c-n'], failures: [], blockedBy: 'chain-a' });
    expect(g['top']!.stage).toBe('DEPLOYED');
    expect(g['left']).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'minimum_successful_nodes', needed: 1, actual: 0 }] });
    expect(g['right']!.stage).toBe('DEPLOYED');
    expect(g['bottom']).toMatchObject({ stage: 'FAILED', failures: [], blockedBy: 'left' });
    expect(g['alone']!.stage).toBe('DEPLOYED');

    // Blocked groups were never attempted: their nodes were not touched and never started.
    for (const node of ['chain-b-n', 'chain-c-n', 'bottom-n']) {
      expect(site.nodes[node]).toMatchObject({ prepareCount: 0, deployCount: 0 });
      expect(report!.nodes[node]).toBe('NOT_STARTED');
    }
    expect(report!.nodes).toMatchObject({ 'chain-a-n': 'FAILED', 'left-n': 'FAILED', 'top-n': 'DEPLOYED', 'right-n': 'DEPLOYED', 'alone-n': 'DEPLOYED' });
    expect(site.nodes['chain-a-n']).toMatchObject({ prepareCount: 1, deployCount: 0 });
  });

  it('a failed diamond top fails all three below it', async () => {
    const nodes = [failsPrepare('top-n'), ok('left-n'), ok('right-n'), ok('bottom-n')];
    const groups = [
      groupOf('top', ['top-n'], min1),
      groupOf('left', ['left-n'], { depends_on: ['top'] }),
      groupOf('right', ['right-n'], { depends_on: ['top'] }),
      groupOf('bottom', ['bottom-n'], { depends_on: ['left', 'right'] }),
    ];
    const { outcome, report, site } = await deploy(nodes, groups);

    expect(outcome.status).toBe('SUCCEEDED');
    for (const name of ['left', 'right', 'bottom']) expect(report!.groups[name]).toMatchObject({ stage: 'FAILED', blockedBy: 'top' });
    expect(Object.values(site.nodes).map((n) => n.prepareCount)).toEqual([1, 0, 0, 0]);
  });

  it('a failed critical group fails the run only after every other group was handled', async () => {
    const nodes = [failsPrepare('crit-n'), ok('after-crit-n'), ok('first-n'), ok('second-n'), ok('third-n')];
    const groups = [
      groupOf('crit', ['crit-n'], { critical: true, ...min1 }),
      groupOf('after-crit', ['after-crit-n'], { depends_on: ['crit'] }),
      // Independent groups, all after crit in the order; second and third only become ready after first deployed.
      groupOf('first', ['first-n']),
      groupOf('second', ['second-n'], { depends_on: ['first'] }),
      groupOf('third', ['third-n'], { depends_on: ['second'] }),
    ];
    const { outcome, message, report, runs } = await deploy(nodes, groups);

    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toBe('CriticalGroupFailed');
    expect(message).toBe('Critical groups failed: crit');
    expect(report).toMatchObject({ status: 'FAILED', criticalGroupsFailed: true, failedCriticalGroups: ['crit'] });
    expect(report!.groups['after-crit']).toMatchObject({ stage: 'FAILED', blockedBy: 'crit' });
    for (const name of ['first', 'second', 'third']) expect(report!.groups[name]!.stage).toBe('DEPLOYED');
    expect(report!.nodes).toMatchObject({
      'first-n': 'DEPLOYED',
      'second-n': 'DEPLOYED',
      'third-n': 'DEPLOYED',
      'crit-n': 'FAILED',
      'after-crit-n': 'NOT_STARTED',
    });
    // The independent groups ran after the critical group had already failed.
    const crit = spanOf(runs.filter((r) => r.group === 'crit'));
    expect(spanOf(runs.filter((r) => r.group === 'third')).from).toBeGreaterThan(crit.to);
  });

  it('a critical group blocked by a failed non-critical group fails the run', async () => {
    const nodes = [failsDeploy('base-n'), ok('crit-n'), ok('other-n')];
    const groups = [groupOf('base', ['base-n'], min1), groupOf('crit', ['crit-n'], { critical: true, depends_on: ['base'] }), groupOf('other', ['other-n'])];
    const { outcome, message, report, site } = await deploy(nodes, groups);

    expect(outcome.error).toBe('CriticalGroupFailed');
    expect(message).toBe('Critical groups failed: crit');
    expect(report!.groups['crit']).toEqual({ stage: 'FAILED', critical: true, nodes: ['crit-n'], failures: [], blockedBy: 'base' });
    expect(report!.groups['other']!.stage).toBe('DEPLOYED');
    expect(site.nodes['crit-n']!.prepareCount).toBe(0);
  });

  it('names every critical group that failed', async () => {
    const nodes = [failsPrepare('c1-n'), failsDeploy('c2-n'), ok('c3-n')];
    const groups = [
      groupOf('c1', ['c1-n'], { critical: true, ...min1 }),
      groupOf('c2', ['c2-n'], { critical: true, ...min1 }),
      groupOf('c3', ['c3-n'], { critical: true, ...min1 }),
    ];
    const { outcome, message, report } = await deploy(nodes, groups);

    expect(outcome.error).toBe('CriticalGroupFailed');
    expect(message).toBe('Critical groups failed: c1, c2');
    expect(report!.failedCriticalGroups).toEqual(['c1', 'c2']);
    expect(report!.groups['c3']!.stage).toBe('DEPLOYED');
  });
});
