import type { EmbeddedRuntime } from '../../engine/embedded-runtime';
import { eventually, startTestRuntime } from '../support/embedded';
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

  it('cancels a running deployment: no new group starts, it ends CANCELLED (the execution fails DeploymentCancelled); an ended one or an unknown id is refused', async () => {
    const strategy = {
      groups: [
        { name: 'first', critical: true, depends_on: [], selectors: [{ node_names: [nodeName(1)] }] },
        { name: 'second', critical: true, depends_on: ['first'], selectors: [{ node_names: [nodeName(2)] }] },
      ],
    };
    const deployment = await runtime.run('groupDeployment', { strategy, pollIntervalSeconds: 10 });
    await eventually(runtime, async () => (await runtime.deployments.getDeployment(deployment.id)) ?? undefined, 'the deployment record');
    expect(await runtime.cancel(deployment.id)).toEqual({ id: deployment.id, kind: 'deployment', state: 'CANCELLING', running: true });
    const outcome = await deployment.outcome;
    expect({ status: outcome.status, error: outcome.error }).toEqual({ status: 'FAILED', error: 'DeploymentCancelled' });
    expect(outcome.cause).toContain('second');
    const record = (await runtime.deployments.getDeployment(deployment.id))!;
    expect(record.status).toBe('CANCELLED');
    // The group under way was not deployed after the cancel; the next one never started.
    expect(record.state.groups['first']!.stage).not.toBe('DEPLOYED');
    expect(record.state.groups['second']!.stage).toBe('NOT_STARTED');
    expect(runtime.siteState()?.nodes[nodeName(2)]).toMatchObject({ prepareCount: 0, deployCount: 0 });
    expect(runtime.siteState()?.nodes[nodeName(1)]).toMatchObject({ deployCount: 0 });

    await expect(runtime.cancel(deployment.id)).rejects.toMatchObject({ name: 'SessionNotCancellableError' });
    await expect(runtime.cancel('no-such-id')).rejects.toMatchObject({ name: 'SessionNotFoundError' });
  });
});
