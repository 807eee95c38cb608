import { renderDeploymentSummary } from '../../../cli/deployment-summary';
import { parseSiteDefinition, type SiteDefinitionInput } from '../../../simulator';
import { startTestRuntime } from '../../support/embedded';
import { groupOf, QUICK_POLL, QUICK_TIMING, runDeployment } from '../../support/deployment-sites';

const NODES = ['flaky-n', 'after-n', 'other-n'].map((name, i) => ({ name, nid: i + 1 }));
const GROUPS = [groupOf('flaky', ['flaky-n']), groupOf('after', ['after-n'], { depends_on: ['flaky'] }), groupOf('other', ['other-n'])];

async function deploy(apiFaults: SiteDefinitionInput['apiFaults'], groups = GROUPS) {
  const runtime = await startTestRuntime({ site: parseSiteDefinition({ nodes: NODES, timing: QUICK_TIMING, apiFaults }) });
  try {
    return await runDeployment(runtime, { strategy: { groups }, ...QUICK_POLL });
  } finally {
    await runtime.close();
  }
}

describe('provisioner API trouble', () => {
  it('transient errors starting and polling actions are retried: nothing is submitted twice', async () => {
    const { outcome, report, site } = await deploy([
      { service: 'provisioner', method: 'POST', status: 503, count: 2 },
      { service: 'provisioner', method: 'GET', status: 500, count: 2, afterCalls: 1 },
    ]);

    expect(outcome.status).toBe('SUCCEEDED');
    expect(Object.values(report!.groups).map((g) => g.stage)).toEqual(['DEPLOYED', 'DEPLOYED', 'DEPLOYED']);
    for (const node of Object.values(site.nodes)) expect(node).toMatchObject({ prepareCount: 1, deployCount: 1 });
    expect(site.violations).toEqual([]);
  });

  it('a provisioner that answers 503 ten times in a row is waited out with backoff over minutes: the run succeeds, each node deployed once', async () => {
    const { outcome, report, site } = await deploy([{ service: 'provisioner', method: 'POST', status: 503, count: 10 }]);

    expect(outcome.status).toBe('SUCCEEDED');
    expect(Object.values(report!.groups).map((g) => g.stage)).toEqual(['DEPLOYED', 'DEPLOYED', 'DEPLOYED']);
    for (const node of Object.values(site.nodes)) expect(node).toMatchObject({ prepareCount: 1, deployCount: 1 });
  });

  it('a group whose actions cannot be polled fails with its dependants; the others go on', async () => {
    const { outcome, report, site } = await deploy([{ service: 'provisioner', method: 'GET', path: '-flaky-prepare-', status: 500, count: 1000 }]);

    expect(outcome.status).toBe('SUCCEEDED');
    // The caught error reaches the group's record: the report (JSON and text) names what broke it.
    const cause = expect.stringMatching(/^SiteServiceError: provisioner: GET http:\/\/.*-flaky-prepare-.* answered 500/);
    expect(report!.groups['flaky']).toEqual({ stage: 'FAILED', critical: false, nodes: ['flaky-n'], failures: [], cause });
    expect(renderDeploymentSummary(report!)).toMatch(/flaky\s+FAILED\s+1 nodes {2}SiteServiceError: provisioner: GET .* answered 500/);
    expect(report!.groups['after']).toMatchObject({ stage: 'FAILED', blockedBy: 'flaky' });
    expect(report!.groups['after']!.cause).toBeUndefined();
    expect(report!.groups['other']!.stage).toBe('DEPLOYED');
    expect(site.nodes['after-n']).toMatchObject({ prepareCount: 0, deployCount: 0 });
    expect(site.nodes['flaky-n']).toMatchObject({ prepareCount: 1, deployCount: 0 });
  });

  it('a critical group whose actions cannot be started fails the run after the others', async () => {
    const groups = [groupOf('flaky', ['flaky-n'], { critical: true }), groupOf('other', ['other-n'])];
    const { outcome, message, report } = await deploy([{ service: 'provisioner', method: 'POST', status: 500, count: 1000 }], groups);

    expect(outcome.error).toBe('CriticalGroupFailed');
    expect(message).toBe('Critical groups failed: flaky');
    // Every start failed, so `other` failed too, but only flaky was critical.
    expect(report!.groups['flaky']).toMatchObject({ stage: 'FAILED', cause: expect.stringMatching(/^SiteServiceError: provisioner: POST .* answered 500/) });
    expect(report!.groups['other']).toMatchObject({ stage: 'FAILED', cause: expect.stringMatching(/answered 500/) });
    expect(report!.failedCriticalGroups).toEqual(['flaky']);
  });
});
