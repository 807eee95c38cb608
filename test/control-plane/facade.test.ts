import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { startTestRuntime } from '../support/embedded';
import { buildSite, nodeName, upgradeRequest } from '../support/sites';

describe('the engine facade (embedded runtime)', () => {
  let runtime: EmbeddedRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ site: buildSite(4) });
  });
  afterAll(() => runtime.close());

  it('runs both workflows, lists them with their kind, and reports each by id', async () => {
    const upgrade = await runtime.run('rollingUpgrade', upgradeRequest({ upgradeStepSize: 4 }));
    const deployment = await runtime.run('groupDeployment', { nodes: [nodeName(0)], pollIntervalSeconds: 10 });
    expect([upgrade.kind, deployment.kind]).toEqual(['upgrade', 'deployment']);
    expect(upgrade.executionArn).toContain(':execution:RollingUpgrade:');
    expect(deployment.executionArn).toContain(':execution:GroupDeployment:');
    expect((await upgrade.outcome).status).toBe('SUCCEEDED');
    expect((await deployment.outcome).status).toBe('SUCCEEDED');

    const listed = await runtime.sessions();
    expect(listed.map(({ kind, id }) => ({ kind, id })).sort((a, b) => a.kind.localeCompare(b.kind))).toEqual([
      { kind: 'deployment', id: deployment.id },
      { kind: 'upgrade', id: upgrade.id },
    ]);
    expect(await runtime.session(upgrade.id)).toMatchObject({ kind: 'upgrade', report: { upgradeId: upgrade.id, completed: true } });
    expect(await runtime.session(deployment.id)).toMatchObject({ kind: 'deployment', report: { deploymentId: deployment.id, status: 'SUCCEEDED' } });
    expect(await runtime.session('no-such-id')).toBeUndefined();

    expect(await runtime.progress(upgrade.id)).toMatchObject({ kind: 'upgrade', total: 4, upgraded: 4, failed: 0 });
    expect(await runtime.progress(deployment.id)).toMatchObject({ kind: 'deployment', nodes: { DEPLOYED: 1, NOT_STARTED: 0 } });
    expect(runtime.siteState()?.nodes[nodeName(0)]).toBeDefined();
  });

  it('refuses to cancel a deployment that has ended, naming its status, and an unknown id as not found', async () => {
    const deployment = await runtime.run('groupDeployment', { nodes: [nodeName(1)], pollIntervalSeconds: 10 });
    await deployment.outcome;
    await expect(runtime.cancel(deployment.id)).rejects.toMatchObject({ name: 'SessionNotCancellableError', state: 'SUCCEEDED' });
    await expect(runtime.cancel('no-such-id')).rejects.toMatchObject({ name: 'SessionNotFoundError' });
  });
});
