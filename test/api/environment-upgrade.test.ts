import { environmentUpgradeReportSchema, environmentUpgradeSummarySchema, startedRunSchema } from '../../api/schemas';
import { problemSchema } from '../../api/problems';
import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { call, startServedApi, type ApiReply } from '../support/api';
import { eventually, startTestRuntime } from '../support/embedded';
import { CLOUD_NODES, buildCloudSite, environmentUpgradeRequest } from '../support/environments';

type Served = Awaited<ReturnType<typeof startServedApi>>;

function expectProblem(reply: ApiReply, status: number, fields?: string[]) {
  expect({ status: reply.status, type: reply.headers.get('content-type') }).toEqual({ status, type: 'application/problem+json' });
  const problem = problemSchema.parse(reply.body);
  if (fields) expect(problem.errors?.map((e) => e.field)).toEqual(fields);
  return problem;
}

/**
 * These runs are on virtual time: a stalled run fails at once (the clock's settled() throws), so the
 * wall-clock limits here only guard against a hang. They are generous: the first case alone is ~17 s of
 * CPU, and under the whole suite on a loaded 2-core host it overran jest's 60 s default and a 60 s guard.
 */
const HANG_GUARD_MS = 240_000;
jest.setTimeout(300_000);

/** Polls GET /sessions/{id} (on the runtime's virtual time) until the upgrade's phase is COMPLETE or FAILED. */
async function untilEnded(served: Served, id: string) {
  const request = (path: string) => call(served.runtime, served.apiEndpoint, 'GET', path);
  return eventually(
    served.runtime,
    async () => {
      const got = await request(`/sessions/${id}`);
      return got.status === 200 && ['COMPLETE', 'FAILED'].includes(got.body.progress.phase) ? environmentUpgradeReportSchema.parse(got.body) : undefined;
    },
    `environment upgrade ${id} to end`,
    HANG_GUARD_MS,
  );
}

const nodeIds = (env: { nodes: { id: number }[] }) => env.nodes.map((n) => n.id).sort();

describe('POST /environments/{id}/upgrade: the side-by-side upgrade as a workflow, over HTTP against rollout serve', () => {
  let served: Served;
  let runtime: EmbeddedRuntime;
  const request = (method: string, path: string, body?: unknown) => call(runtime, served.apiEndpoint, method, path, body);
  let open: Served | undefined;
  const serve = async (site: Parameters<typeof startServedApi>[0]) => {
    open = served = await startServedApi(site);
    runtime = served.runtime;
  };
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });

  it('clones the seed, reimages the controllers, upgrades the other nodes and moves them into the seed, reported as a session', async () => {
    await serve(buildCloudSite());
    const created = await request('POST', '/environments/5/upgrade', environmentUpgradeRequest());
    expect(created.status).toBe(201);
    const started = startedRunSchema.parse(created.body);
    expect(started.kind).toBe('environment-upgrade');
    expect(created.headers.get('location')).toBe(`/sessions/${started.id}`);

    const report = await untilEnded(served, started.id);
    expect(report).toMatchObject({ state: 'READY', completed: true, progress: { phase: 'COMPLETE' }, environmentId: 5, releaseId: 2 });
    expect(report.failure).toBeUndefined();
    // On the simulated site its createdAt is the instant it starts from, never a date; the wall clock says when.
    expect(report.createdAt).toEqual({ secondsFromStart: 0, timeBase: 'simulated' });
    expect(Date.parse(report.wallCreatedAt!)).not.toBeNaN();
    expect(report.rollingUpgrades.controllers).toMatchObject({ nodes: ['ctl-1', 'ctl-2'], state: 'READY', counts: { UPGRADED: 2, FAILED: 0 } });
    expect(report.rollingUpgrades.nodes).toMatchObject({ nodes: ['cmp-1', 'cmp-2', 'cmp-3'], state: 'READY', counts: { UPGRADED: 3, FAILED: 0 } });
    expect(report.messages.slice(0, 2)).toEqual([
      'Accepted: upgrade of environment 5 to release 2',
      expect.stringContaining("Environment upgrade of environment 5 'cloud' to release 2"),
    ]);
    expect(report.messages.at(-1)).toContain('Environment Upgrade Completed: 3 node(s) upgraded and moved to upgrade seed');

    // The seed holds every node with its id, roles and addresses; the original none.
    const seed = (await request('GET', `/environments/${report.seedId}`)).body;
    expect(seed).toMatchObject({ name: 'cloud-8.0', release_id: 2, original_cluster_id: 5, status: 'operational' });
    expect(nodeIds(seed)).toEqual(CLOUD_NODES.map((n) => n.id));
    expect((await request('GET', '/environments/5')).body).toMatchObject({ nodes: [], status: 'stopped' });

    // Each node rebooted once, with the release's template; the controllers before any other node; no node outside touched.
    const site = runtime.siteState()!;
    for (const node of CLOUD_NODES) expect({ node: node.name, boots: site.nodes[node.name]!.bootCount }).toEqual({ node: node.name, boots: 1 });
    expect(site.nodes['other']!.bootCount).toBe(0);
    expect(site.violations).toEqual([]);
    const lastControllerBack = Math.max(...['ctl-1', 'ctl-2'].map((n) => site.nodes[n]!.outOfService[0]![1]!));
    const firstOtherDown = Math.min(...['cmp-1', 'cmp-2', 'cmp-3'].map((n) => site.nodes[n]!.outOfService[0]![0]));
    expect(lastControllerBack).toBeLessThanOrEqual(firstOtherDown);

    const listed = await request('GET', '/sessions');
    expect(
      listed.body.filter((s: { upgradeId: string }) => s.upgradeId === started.id).map((s: unknown) => environmentUpgradeSummarySchema.parse(s).state),
    ).toEqual(['READY']);
    expect(listed.body.find((s: { upgradeId: string }) => s.upgradeId === started.id).createdAt).toEqual({ secondsFromStart: 0, timeBase: 'simulated' });
    // Its rolling upgrades are sessions of their own.
    const child = report.rollingUpgrades.nodes!.upgradeId;
    expect((await request('GET', `/sessions/${child}`)).body).toMatchObject({ kind: 'ComputeUpgradeSession', upgradeTemplateId: 'img-2' });

    // An ended rolling upgrade that a running environment upgrade still reads is not removed (409 naming it).
    const { session } = (await runtime.environmentUpgrades.getUpgrade(started.id))!;
    const reader = {
      ...session,
      upgradeId: 'still-following',
      state: 'UPDATING' as const,
      completed: false,
      progress: { ...session.progress, phase: 'NODES' as const },
    };
    await runtime.environmentUpgrades.createUpgrade(reader);
    expect(expectProblem(await request('DELETE', `/sessions/${child}`), 409).detail).toContain('environment upgrade still-following');
    await runtime.environmentUpgrades.deleteUpgrade(reader.upgradeId);
    // Once nothing reads it, a DELETE removes it, and so the ended environment upgrade (CRUS removes ended sessions).
    expect((await request('DELETE', `/sessions/${child}`)).body).toEqual({ id: child, kind: 'upgrade', state: 'READY', running: false, removed: true });
    expect((await request('DELETE', `/sessions/${started.id}`)).body).toEqual({
      id: started.id,
      kind: 'environment-upgrade',
      state: 'READY',
      running: false,
      removed: true,
    });
    for (const id of [child, started.id]) expectProblem(await request('GET', `/sessions/${id}`), 404);
  });

  it('fails, naming the controller, when a controller does not come back; the other nodes are not touched', async () => {
    await serve(buildCloudSite((name) => (name === 'ctl-2' ? { faults: { boot: 'fail' } } : {})));
    const created = await request('POST', '/environments/5/upgrade', environmentUpgradeRequest());
    expect(created.status).toBe(201);

    const report = await untilEnded(served, created.body.id);
    expect(report).toMatchObject({ state: 'FAILED', completed: false, progress: { phase: 'FAILED' } });
    expect(report.failure).toEqual({
      error: 'ControllerUpgradeFailed',
      problems: [{ field: 'nodes', message: "controller 'ctl-2' did not come back on release 2: upgrading-boot-session-failed" }],
    });
    expect(report.rollingUpgrades.nodes).toBeUndefined();
    expect(report.messages.at(-1)).toContain("Environment upgrade failed in phase CONTROLLERS - nodes: controller 'ctl-2' did not come back");
    const site = runtime.siteState()!;
    for (const name of ['cmp-1', 'cmp-2', 'cmp-3']) expect({ name, boots: site.nodes[name]!.bootCount }).toEqual({ name, boots: 0 });
    expect(nodeIds((await request('GET', '/environments/5')).body)).toEqual([53, 54, 55]);
    expect((await request('GET', `/environments/${report.seedId}`)).body).toMatchObject({ status: 'error', nodes: [{ id: 51 }, { id: 52 }] });

    // The environment is free again: a second upgrade reuses the seed and reimages the controllers again.
    const again = await request('POST', '/environments/5/upgrade', environmentUpgradeRequest({ name: undefined, release_id: undefined }));
    expect(again.status).toBe(201);
  });

  it('refuses before it starts anything, naming what is wrong (404, 405, 409, 422)', async () => {
    await serve(buildCloudSite());
    expectProblem(await request('POST', '/environments/42/upgrade', environmentUpgradeRequest()), 404);
    expectProblem(await request('POST', '/environments/5/upgrade', environmentUpgradeRequest({ release_id: 9 })), 404, ['release_id']);
    expectProblem(await request('POST', '/environments/5/upgrade', '{"name":'), 400);
    expectProblem(await request('POST', '/environments/5/upgrade', { name: 'x', release_id: 2 }), 422, ['rolling_upgrade']);
    expectProblem(await request('POST', '/environments/5/upgrade', environmentUpgradeRequest({ name: undefined })), 422, ['name']);
    expectProblem(await request('POST', '/environments/5/upgrade', environmentUpgradeRequest({}, { upgradeStepSize: 0, upgradeTemplateId: 'img-2' })), 422, [
      'rolling_upgrade.upgradeTemplateId',
    ]);
    expectProblem(await request('POST', '/environments/5/upgrade', environmentUpgradeRequest({}, { upgradeStepSize: 0 })), 422, [
      'rolling_upgrade.upgradeStepSize',
    ]);
    expectProblem(await request('POST', '/environments/5/upgrade', environmentUpgradeRequest({ controller_roles: ['nova'] })), 422, ['controller_roles']);
    // The site: a group that does not exist, and a starting group holding another's node.
    expectProblem(await request('POST', '/environments/5/upgrade', environmentUpgradeRequest({}, { upgradingLabel: 'no-such-group' })), 422, [
      'rolling_upgrade.upgradingLabel',
    ]);
    expectProblem(await request('POST', '/environments/5/upgrade', environmentUpgradeRequest({}, { startingLabel: 'compute' })), 422, [
      'rolling_upgrade.startingLabel',
    ]);
    // A release whose boot template the boot service lacks.
    await runtime.environments.seed({
      releases: [
        {
          id: 3,
          name: 'Mitaka',
          version: '9.0',
          roles: ['controller', 'compute', 'cinder'],
          bootTemplate: 'img-9',
          attributeChanges: { renamed: {}, removed: [] },
        },
      ],
      environments: [],
    });
    expectProblem(await request('POST', '/environments/5/upgrade', environmentUpgradeRequest({ release_id: 3 })), 422, ['release_id']);
    // 409: a role release 2 drops (environment 1's mongo node), an attribute it removes (environment 2).
    expect(expectProblem(await request('POST', '/environments/1/upgrade', environmentUpgradeRequest()), 409, ['nodes']).detail).toContain(
      "role 'mongo' of node 13",
    );
    expectProblem(await request('POST', '/environments/2/upgrade', environmentUpgradeRequest()), 409, [
      'attributes.editable.storage.iser',
      'attributes.editable.common.nova_quota',
    ]);
    // 405: a seed is not upgraded itself; and the route takes POST only.
    const seed = await request('POST', '/environments/3/upgrade/clone', { name: 'idle-8.0', release_id: 2 });
    expectProblem(await request('POST', `/environments/${seed.body.id}/upgrade`, environmentUpgradeRequest()), 405);
    expect(expectProblem(await request('GET', '/environments/5/upgrade'), 405).detail).toContain('allowed: POST');

    expect(runtime.engine.listExecutions(runtime.stateMachineArns.EnvironmentUpgrade)).toEqual([]);
    expect(Object.values(runtime.siteState()!.nodes).every((node) => node.bootCount === 0)).toBe(true);
  });

  it('refuses a second upgrade of an environment while one runs (409), and a deletion ends the running one DELETED', async () => {
    await serve(buildCloudSite((name) => (name === 'cmp-1' ? { wlm: { state: 'ALLOCATED', busySeconds: 90_000 } } : {})));
    const created = await request('POST', '/environments/5/upgrade', environmentUpgradeRequest());
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expectProblem(await request('POST', '/environments/5/upgrade', environmentUpgradeRequest()), 409);

    // cmp-1 runs a long job: the node phase waits in QUIESCING until the deletion.
    await eventually(
      runtime,
      async () => ((await request('GET', `/sessions/${id}`)).body.rollingUpgrades?.nodes?.stage === 'QUIESCING' ? true : undefined),
      'the nodes quiescing',
      HANG_GUARD_MS,
    );
    const deleted = await request('DELETE', `/sessions/${id}`);
    expect(deleted).toMatchObject({ status: 200, body: { id, kind: 'environment-upgrade', state: 'DELETING', running: true } });
    const report = await untilEnded(served, id);
    expect(report).toMatchObject({ state: 'DELETED', progress: { phase: 'COMPLETE' }, rollingUpgrades: { nodes: { state: 'DELETED' } } });
    expect(report.messages.some((m) => m.includes('Deletion passed on to rolling upgrade'))).toBe(true);
    // Deleted before any of the other nodes booted: they stay in the original; the controllers, upgraded, in the seed.
    expect(nodeIds((await request('GET', '/environments/5')).body)).toEqual([53, 54, 55]);
    // Ended, the next DELETE removes it (CRUS).
    expect((await request('DELETE', `/sessions/${id}`)).body).toEqual({ id, kind: 'environment-upgrade', state: 'DELETED', running: false, removed: true });
    expectProblem(await request('GET', `/sessions/${id}`), 404);
  });

  describe('started without the API (as from the console)', () => {
    let direct: EmbeddedRuntime;
    afterEach(() => direct?.close());

    it('records a refusal on the session (the first state checks the request again), and fails the execution saying why', async () => {
      direct = await startTestRuntime({ site: buildCloudSite() });
      const run = await direct.startEnvironmentUpgrade({ environmentId: 5, request: environmentUpgradeRequest({}, { startingLabel: 'compute' }) });
      const outcome = await run.outcome;
      expect(outcome).toMatchObject({
        status: 'FAILED',
        error: 'EnvironmentUpgradeFailed',
        cause: expect.stringContaining("rolling_upgrade.startingLabel: group 'compute' holds nodes outside environment 5 (other)"),
      });
      expect((await direct.environmentUpgrades.getUpgrade(run.id))?.session).toMatchObject({
        state: 'FAILED',
        failure: { error: 'InvalidInputError', problems: [{ field: 'rolling_upgrade.startingLabel' }] },
      });
      expect(Object.values(direct.siteState()!.nodes).every((node) => node.bootCount === 0)).toBe(true);
    });

    it('continues as new past its iteration budget and ends as one session', async () => {
      direct = await startTestRuntime({ site: buildCloudSite(), environmentUpgradeSettings: { iterationsPerExecution: 3 } });
      const run = await direct.startEnvironmentUpgrade({ environmentId: 5, request: environmentUpgradeRequest() });
      const outcome = await run.outcome;
      expect(outcome.status).toBe('SUCCEEDED');
      expect(direct.engine.listExecutions(direct.stateMachineArns.EnvironmentUpgrade).length).toBeGreaterThan(2);
      expect((await direct.environmentUpgrades.getUpgrade(run.id))?.session).toMatchObject({
        state: 'READY',
        completed: true,
        progress: { phase: 'COMPLETE' },
      });
      expect(nodeIds((await direct.environments.getEnvironment(5))!.environment)).toEqual([]);
    });
  });
});
