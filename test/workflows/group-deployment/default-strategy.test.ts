import { startTestRuntime } from '../../support/embedded';
import { deploymentSite, namedNodes, QUICK_POLL, runDeployment, touchedNodes } from '../../support/deployment-sites';

async function deployWithoutStrategy(faults: (i: number) => { prepare?: 'fail'; deploy?: 'fail' } | undefined, input: Record<string, unknown> = {}) {
  const runtime = await startTestRuntime({ site: deploymentSite(namedNodes('n', 4, faults)) });
  try {
    return await runDeployment(runtime, { ...QUICK_POLL, ...input });
  } finally {
    await runtime.close();
  }
}

describe('no strategy: one critical group "default" of every node, 100% required', () => {
  it('deploys every node of the site', async () => {
    const { outcome, report, site } = await deployWithoutStrategy(() => undefined);

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report).toMatchObject({ status: 'SUCCEEDED', criticalGroupsFailed: false, failedCriticalGroups: [] });
    expect(Object.keys(report!.groups)).toEqual(['default']);
    expect(report!.groups['default']).toEqual({ stage: 'DEPLOYED', critical: true, nodes: ['n00', 'n01', 'n02', 'n03'], failures: [] });
    expect(report!.nodes).toEqual({ n00: 'DEPLOYED', n01: 'DEPLOYED', n02: 'DEPLOYED', n03: 'DEPLOYED' });
    for (const node of Object.values(site.nodes)) expect(node).toMatchObject({ prepareCount: 1, deployCount: 1 });
    expect(site.violations).toEqual([]);
  });

  it('fails the run when one node fails to deploy', async () => {
    const { outcome, message, report } = await deployWithoutStrategy((i) => (i === 2 ? { deploy: 'fail' } : undefined));

    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toBe('CriticalGroupFailed');
    expect(message).toBe('Critical groups failed: default');
    expect(report).toMatchObject({ status: 'FAILED', criticalGroupsFailed: true, failedCriticalGroups: ['default'] });
    expect(report!.groups['default']).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'percent_successful_nodes', needed: 100, actual: 75 }] });
    expect(report!.nodes).toEqual({ n00: 'DEPLOYED', n01: 'DEPLOYED', n02: 'FAILED', n03: 'DEPLOYED' });
  });

  it('fails the run when one node fails to prepare, and deploys none', async () => {
    const { outcome, report, site } = await deployWithoutStrategy((i) => (i === 0 ? { prepare: 'fail' } : undefined));

    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toBe('CriticalGroupFailed');
    expect(report!.groups['default']).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'percent_successful_nodes', needed: 100, actual: 75 }] });
    expect(report!.nodes['n00']).toBe('FAILED');
    // The group missed its criteria at prepare: its deploy is skipped.
    for (const node of Object.values(site.nodes)) expect(node).toMatchObject({ prepareCount: 1, deployCount: 0 });
  });

  it('with a node list, touches only those nodes', async () => {
    const { outcome, report, site } = await deployWithoutStrategy(() => undefined, { nodes: ['n03', 'n01'] });

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report!.groups['default']).toEqual({ stage: 'DEPLOYED', critical: true, nodes: ['n01', 'n03'], failures: [] });
    expect(report!.nodes).toEqual({ n01: 'DEPLOYED', n03: 'DEPLOYED' });
    expect(touchedNodes(site).sort()).toEqual(['n01', 'n03']);
    expect(site.nodes['n01']).toMatchObject({ prepareCount: 1, deployCount: 1 });
    expect(site.nodes['n03']).toMatchObject({ prepareCount: 1, deployCount: 1 });
  });

  it('with a node list, one failing node of the list fails the run', async () => {
    const { outcome, report, site } = await deployWithoutStrategy((i) => (i === 1 ? { deploy: 'fail' } : undefined), { nodes: ['n00', 'n01'] });

    expect(outcome.error).toBe('CriticalGroupFailed');
    expect(report!.groups['default']).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'percent_successful_nodes', needed: 100, actual: 50 }] });
    expect(touchedNodes(site).sort()).toEqual(['n00', 'n01']);
  });
});
