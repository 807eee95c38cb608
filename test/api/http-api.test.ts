import { MASKED_VALUE, environmentSchema } from '../../core/environments';
import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { createApi } from '../../api';
import { listenApi } from '../../api/node-http';
import {
  assignedNodeSchema,
  cancelResultSchema,
  deploymentCancelResultSchema,
  deploymentReportSchema,
  deploymentSummarySchema,
  sessionReportSchema,
  sessionSummarySchema,
  startedDeploymentSchema,
  startedRunSchema,
  startedSessionSchema,
  stopResultSchema,
} from '../../api/schemas';
import { problemSchema } from '../../api/problems';
import { call, startServedApi, type ApiReply } from '../support/api';
import { deploymentNodeRuns } from '../support/deployment-sites';
import { eventually } from '../support/embedded';
import { buildSiteWithEnvironments } from '../support/environments';
import { nodeName, upgradeRequest } from '../support/sites';
import { parseSiteDefinition } from '../../simulator';

let served: Awaited<ReturnType<typeof startServedApi>>;
let runtime: EmbeddedRuntime;
const request = (method: string, path: string, body?: unknown) => call(runtime, served.apiEndpoint, method, path, body);

/** A problem+json answer with `status`, whose `errors` name `fields` (when given). */
function expectProblem(reply: ApiReply, status: number, fields?: string[]) {
  expect(reply.status).toBe(status);
  expect(reply.headers.get('content-type')).toBe('application/problem+json');
  const problem = problemSchema.parse(reply.body);
  expect(problem.status).toBe(status);
  if (fields) expect(problem.errors?.map((e) => e.field)).toEqual(fields);
  return problem;
}

beforeAll(async () => {
  // Node 1 runs a long job: a session holds in step 0 QUIESCING until it is deleted.
  const site = buildSiteWithEnvironments(4);
  // The REST API as `rollout serve` serves it, in-process (on virtual time).
  served = await startServedApi(
    parseSiteDefinition({ ...site, nodes: site.nodes.map((n, i) => (i === 1 ? { ...n, wlm: { state: 'ALLOCATED', busySeconds: 90_000 } } : n)) }),
  );
  runtime = served.runtime;
});
afterAll(() => served.close());

describe('upgrade sessions over HTTP (CRUS semantics)', () => {
  it('creates (201 with a Location), gets, lists and deletes a session (200, DELETING), then removes it once it has ended (200, then 404)', async () => {
    const created = await request('POST', '/sessions', upgradeRequest());
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.headers.get('location')).toBe(`/sessions/${id}`);
    await eventually(runtime, async () => ((await runtime.store.getSession(id))?.progress.stage === 'QUIESCING' ? true : undefined), 'QUIESCING');

    const got = await request('GET', `/sessions/${id}`);
    expect(got.status).toBe(200);
    // Steps count from 1; a simulated instant is seconds from the session's start, never a date.
    expect(sessionReportSchema.parse(got.body)).toMatchObject({
      upgradeId: id,
      state: 'UPDATING',
      progress: { step: 1, stage: 'QUIESCING' },
      createdAt: { secondsFromStart: 0, timeBase: 'simulated' },
    });
    expect(got.body.messageLog[0].at).toEqual({ secondsFromStart: expect.any(Number), timeBase: 'simulated' });
    const listed = await request('GET', '/sessions');
    expect(listed.status).toBe(200);
    expect(listed.body.map((s: unknown) => sessionSummarySchema.parse(s).upgradeId)).toContain(id);
    expect(listed.body.find((s: { upgradeId: string }) => s.upgradeId === id).createdAt).toEqual({ secondsFromStart: 0, timeBase: 'simulated' });

    const deleted = await request('DELETE', `/sessions/${id}`);
    expect(deleted.status).toBe(200);
    expect(cancelResultSchema.parse(deleted.body)).toEqual({ id, kind: 'upgrade', state: 'DELETING', running: true });
    await eventually(runtime, async () => ((await runtime.store.getSession(id))?.state === 'DELETED' ? true : undefined), 'DELETED');
    // CRUS deletion rules: before booting in step 0 nothing fails and the drain is lifted.
    expect((await request('GET', `/sessions/${id}`)).body).toMatchObject({ state: 'DELETED', counts: { FAILED: 0 } });
    // Ended, it is removed by the next DELETE (CRUS removes a deleted session), with its nodes and messages.
    const removed = await request('DELETE', `/sessions/${id}`);
    expect(cancelResultSchema.parse(removed.body)).toEqual({ id, kind: 'upgrade', state: 'DELETED', running: false, removed: true });
    expectProblem(await request('GET', `/sessions/${id}`), 404);
    expect(await runtime.store.listNodes(id)).toEqual([]);
    expect(await runtime.store.messages.list(id)).toEqual([]);
    expectProblem(await request('DELETE', `/sessions/${id}`), 404);
  });

  it('stops a session (POST /sessions/{id}/stop: 200 STOPPING, then STOPPED: its draining step put back, nothing failed); 409 once stopped; DELETE of the stopped session applies the deletion rules', async () => {
    const created = await request('POST', '/sessions', upgradeRequest());
    const id = created.body.id as string;
    await eventually(runtime, async () => ((await runtime.store.getSession(id))?.progress.stage === 'QUIESCING' ? true : undefined), 'QUIESCING');

    // An execution runs it: a resume would start a second one over the same nodes (409, naming the stop).
    expect(expectProblem(await request('POST', `/sessions/${id}/resume`), 409).detail).toContain(`rollout session stop '${id}'`);
    const stopped = await request('POST', `/sessions/${id}/stop`);
    expect(stopped.status).toBe(200);
    expect(stopResultSchema.parse(stopped.body)).toEqual({ id, kind: 'upgrade', state: 'STOPPING', running: true });
    await eventually(runtime, async () => ((await runtime.store.getSession(id))?.state === 'STOPPED' ? true : undefined), 'STOPPED');
    const got = sessionReportSchema.parse((await request('GET', `/sessions/${id}`)).body);
    expect(got).toMatchObject({ state: 'STOPPED', counts: { FAILED: 0, NOT_STARTED: 4 } });
    expect(runtime.simulator.state().nodes[nodeName(0)]!.wlmState).toBe('IDLE');
    expectProblem(await request('POST', `/sessions/${id}/stop`), 409);
    expectProblem(await request('POST', '/sessions/no-such-id/stop'), 404);
    expectProblem(await request('GET', `/sessions/${id}/stop`), 405);

    // A DELETE of it is stored (DELETING); nothing runs a stopped session, so its resume (POST .../resume: 202) applies the deletion rules.
    const deleted = await request('DELETE', `/sessions/${id}`);
    expect(cancelResultSchema.parse(deleted.body)).toMatchObject({ id, state: 'DELETING' });
    const resumed = await request('POST', `/sessions/${id}/resume`);
    expect(resumed.status).toBe(202);
    expect(resumed.headers.get('location')).toBe(`/sessions/${id}`);
    expect(startedRunSchema.parse(resumed.body)).toMatchObject({ id, kind: 'upgrade' });
    await eventually(runtime, async () => ((await runtime.store.getSession(id))?.state === 'DELETED' ? true : undefined), 'DELETED');
    expect((await request('GET', `/sessions/${id}`)).body).toMatchObject({ state: 'DELETED', counts: { FAILED: 0 } });
    // Ended: nothing to resume (409); no such session (404); the route takes POST only.
    expect(expectProblem(await request('POST', `/sessions/${id}/resume`), 409).detail).toBe(`session ${id} has ended (DELETED): nothing to resume`);
    expectProblem(await request('POST', '/sessions/no-such-id/resume'), 404);
    expectProblem(await request('GET', `/sessions/${id}/resume`), 405);
    await request('DELETE', `/sessions/${id}`);
  });

  it('refuses invalid fields with a 422 naming each, and a body that is not a JSON object with a 400', async () => {
    expectProblem(await request('POST', '/sessions', upgradeRequest({ upgradeStepSize: 0, failedLabel: undefined })), 422, ['failedLabel', 'upgradeStepSize']);
    expectProblem(await request('POST', '/sessions', upgradeRequest({ colour: 'blue' })), 422, ['colour']);
    expectProblem(await request('POST', '/sessions', '{"startingLabel":'), 400);
    expectProblem(await request('POST', '/sessions', '[1]'), 400);
  });

  it('answers 404 for an unknown id or path, 405 naming the allowed methods', async () => {
    expectProblem(await request('GET', '/sessions/no-such-id'), 404);
    expectProblem(await request('DELETE', '/sessions/no-such-id'), 404);
    const put = expectProblem(await request('PUT', '/sessions/some-id', {}), 405);
    expect(put.detail).toContain('allowed: GET, DELETE');
    expect((await request('PATCH', '/sessions')).headers.get('allow')).toBe('GET, POST, HEAD');
    expectProblem(await request('GET', '/no/such/resource'), 404);
    // Every known path names its methods, HEAD wherever GET is served.
    expect((await request('PUT', '/environments')).headers.get('allow')).toBe('GET, POST, HEAD');
    expect((await request('POST', '/openapi.json')).headers.get('allow')).toBe('GET, HEAD');
    expect((await request('DELETE', '/environments/1/upgrade')).headers.get('allow')).toBe('POST');
  });

  it('answers HEAD as GET without the body, and a body over 1 MiB with 413 before reading it whole', async () => {
    const head = await request('HEAD', '/openapi.json');
    const get = await request('GET', '/openapi.json');
    expect({ status: head.status, body: head.body, length: head.headers.get('content-length') }).toEqual({
      status: 200,
      body: undefined,
      length: String(Buffer.byteLength(JSON.stringify(get.body))),
    });
    expect((await request('HEAD', '/sessions/no-such-id')).status).toBe(404);
    expect((await request('HEAD', '/environments/1/upgrade')).status).toBe(405);
    const large = await request('POST', '/sessions', JSON.stringify({ padding: 'x'.repeat(1024 * 1024) }));
    expectProblem(large, 413);
  });

  it('serves its OpenAPI document', async () => {
    const document = await request('GET', '/openapi.json');
    expect(document.status).toBe(200);
    expect(document.body).toMatchObject({ openapi: '3.1.0', paths: { '/sessions': { get: expect.anything(), post: expect.anything() } } });
  });
});

describe('group deployments over HTTP', () => {
  it('creates (201), gets, lists; a method the route has not is a 405 naming what is allowed; 404 for unknown ids', async () => {
    const created = await request('POST', '/deployments', { nodes: [nodeName(2)], pollIntervalSeconds: 10 });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await eventually(runtime, async () => ((await runtime.deployments.getDeployment(id))?.status === 'SUCCEEDED' ? true : undefined), 'deployment end');
    const got = await request('GET', `/deployments/${id}`);
    expect(got.status).toBe(200);
    expect(deploymentReportSchema.parse(got.body)).toMatchObject({ deploymentId: id, status: 'SUCCEEDED', nodes: { [nodeName(2)]: 'DEPLOYED' } });
    const listed = await request('GET', '/deployments');
    expect(listed.body.map((d: unknown) => deploymentSummarySchema.parse(d).deploymentId)).toContain(id);
    expect(listed.body[0]).not.toHaveProperty('state');
    // A deployment is not a session.
    expectProblem(await request('GET', `/sessions/${id}`), 404);

    expect((await request('PUT', `/deployments/${id}`)).headers.get('allow')).toBe('GET, DELETE, HEAD');
    expectProblem(await request('DELETE', '/deployments/no-such-id'), 404);
    // Stop beside DELETE: an ended deployment cannot be stopped (409), an unknown one is a 404.
    expectProblem(await request('POST', `/deployments/${id}/stop`), 409);
    expectProblem(await request('POST', '/deployments/no-such-id/stop'), 404);
    // Resume as for a session: an ended deployment has nothing to resume (409), an unknown one is a 404.
    expect(expectProblem(await request('POST', `/deployments/${id}/resume`), 409).detail).toBe(`deployment ${id} has ended (SUCCEEDED): nothing to resume`);
    expectProblem(await request('POST', '/deployments/no-such-id/resume'), 404);
    expectProblem(await request('GET', '/deployments/no-such-id'), 404);
    expectProblem(await request('POST', '/deployments', { maxParallelGroups: 0 }), 422, ['maxParallelGroups']);
    expectProblem(await request('POST', '/deployments', '{"nodes": ['), 400);
    expectProblem(await request('POST', '/deployments', '"a string"'), 400);
    expectProblem(await request('PUT', '/deployments'), 405);
  });

  it('cancels (200, CANCELLING): the group in flight finishes its phase, nothing starts after it, it ends CANCELLED; 409 once it has ended', async () => {
    const groups = [
      { name: 'first', critical: true, depends_on: [], selectors: [{ node_names: [nodeName(2)] }] },
      { name: 'second', critical: true, depends_on: ['first'], selectors: [{ node_names: [nodeName(3)] }] },
    ];
    const created = await request('POST', '/deployments', { strategy: { groups }, pollIntervalSeconds: 10 });
    expect(created.body).toMatchObject({ kind: 'deployment' });
    const id = created.body.id as string;
    await eventually(runtime, async () => (deploymentNodeRuns(runtime, id).length > 0 ? true : undefined), 'the first prepare');

    const cancelled = await request('DELETE', `/deployments/${id}`);
    expect(cancelled.status).toBe(200);
    expect(deploymentCancelResultSchema.parse(cancelled.body)).toEqual({ id, kind: 'deployment', state: 'CANCELLING', running: true });
    await eventually(runtime, async () => ((await runtime.deployments.getDeployment(id))?.status === 'CANCELLED' ? true : undefined), 'CANCELLED');

    const report = deploymentReportSchema.parse((await request('GET', `/deployments/${id}`)).body);
    expect(report).toMatchObject({ status: 'CANCELLED', groups: { first: { stage: 'PREPARED' }, second: { stage: 'NOT_STARTED' } } });
    expect(report.nodes).toEqual({ [nodeName(2)]: 'PREPARED', [nodeName(3)]: 'NOT_STARTED' });
    // The prepare in flight finished; nothing started after the cancel.
    expect(deploymentNodeRuns(runtime, id).map(({ node, phase, finishedAt }) => ({ node, phase, finished: finishedAt !== undefined }))).toEqual([
      { node: nodeName(2), phase: 'prepare', finished: true },
    ]);
    // Ended, it is removed by the next DELETE, as an ended session is, with its plan and batch results.
    const removed = await request('DELETE', `/deployments/${id}`);
    expect(deploymentCancelResultSchema.parse(removed.body)).toEqual({ id, kind: 'deployment', state: 'CANCELLED', running: false, removed: true });
    expectProblem(await request('GET', `/deployments/${id}`), 404);
    expect(await runtime.deployments.getDeployment(id)).toBeUndefined();
    await expect(runtime.deployments.getPlan(id)).rejects.toThrow(/no plan stored/);
    expectProblem(await request('DELETE', `/deployments/${id}`), 404);
  });
});

describe("the CLI's checks and controls over HTTP", () => {
  it('a label naming no group of the inventory is a 422 naming the field, unless waitForGroups (a case variant: always)', async () => {
    expectProblem(await request('POST', '/sessions', upgradeRequest({ startingLabel: 'computee' })), 422, ['startingLabel']);
    const typo = expectProblem(await request('POST', '/sessions', upgradeRequest({ failedLabel: 'Failed' })), 422, ['failedLabel']);
    expect(typo.errors?.[0]?.message).toBe("no group 'Failed' in the site's inventory, but there is 'failed' (labels are case-sensitive)");
    expectProblem(await request('POST', '/sessions', upgradeRequest({ failedLabel: 'Failed', waitForGroups: true })), 422, ['failedLabel']);
    expectProblem(await request('POST', '/sessions', upgradeRequest({ waitForGroups: 'yes' })), 422, ['waitForGroups']);
    expect(await runtime.store.list()).toEqual([]);

    // Asked to wait, it starts, and the workflow waits for the group (CRUS's message) until it is deleted.
    const waiting = await request('POST', '/sessions', upgradeRequest({ startingLabel: 'coming-later', waitForGroups: true }));
    expect(waiting.status).toBe(201);
    const id = waiting.body.id as string;
    await eventually(
      runtime,
      async () => ((await runtime.store.messages.list(id)).some((m) => m.includes("failed to obtain Node Group named 'coming-later'")) ? true : undefined),
      'the message',
    );
    expect((await request('DELETE', `/sessions/${id}`)).status).toBe(200);
    await eventually(runtime, async () => ((await runtime.store.getSession(id))?.state === 'DELETED' ? true : undefined), 'DELETED');
    expect((await request('DELETE', `/sessions/${id}`)).body).toMatchObject({ removed: true });
  });

  it('pause, unpause and approve a window (200 with the gate stored); 409 where the session cannot take it, 404 for no session', async () => {
    const window = await request('POST', '/sessions', upgradeRequest({ mode: 'window', maxUnavailable: 1, upgradeStepSize: 1 }));
    const id = window.body.id as string;
    await eventually(runtime, async () => ((await runtime.store.getSession(id))?.progress.stage === 'ROLLING' ? true : undefined), 'ROLLING').catch(
      () => undefined,
    );
    expect((await runtime.store.getSession(id))?.progress.stage).toBe('ROLLING');

    const paused = await request('POST', `/sessions/${id}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ id, action: 'pause', running: true });
    expect((await runtime.store.getSession(id))?.operator?.paused).toBe(true);
    expect((await request('POST', `/sessions/${id}/unpause`)).body).toEqual({ id, action: 'unpause', running: true });
    expect((await runtime.store.getSession(id))?.operator?.paused).toBe(false);
    expect(expectProblem(await request('POST', `/sessions/${id}/approve`), 409).detail).toBe(`cannot approve session ${id}: it is not waiting for an approval`);
    expectProblem(await request('POST', '/sessions/no-such-id/pause'), 404);
    expect((await request('GET', `/sessions/${id}/pause`)).headers.get('allow')).toBe('POST');

    expect((await request('DELETE', `/sessions/${id}`)).status).toBe(200);
    await eventually(runtime, async () => ((await runtime.store.getSession(id))?.state === 'DELETED' ? true : undefined), 'DELETED');
    expect(expectProblem(await request('POST', `/sessions/${id}/unpause`), 409).detail).toBe(`cannot unpause session ${id}: the session is DELETED`);
    await request('DELETE', `/sessions/${id}`);
  });
});

describe('requests the workflow would refuse', () => {
  it('are refused before the 201 when the request and the site tell (422 naming the field): nothing is started', async () => {
    const executions = () =>
      [runtime.stateMachineArns.RollingUpgrade, runtime.stateMachineArns.GroupDeployment].flatMap((arn) => runtime.engine.listExecutions(arn)).length;
    const before = executions();
    expectProblem(await request('POST', '/sessions', upgradeRequest({ upgradeTemplateId: 'no-such-image' })), 422, ['upgradeTemplateId']);
    const strategy = { groups: [{ name: 'a', critical: true, depends_on: ['b'], selectors: [{ node_names: [nodeName(0)] }] }] };
    const unknownGroup = expectProblem(await request('POST', '/deployments', { strategy }), 422, ['strategy.groups[0] (a).depends_on[0]']);
    expect(unknownGroup.errors?.[0]?.message).toContain("'b'");
    expectProblem(await request('POST', '/deployments', { nodes: ['no-such-node'] }), 422, ['nodes[0]']);
    expect(executions()).toBe(before);
  });

  it('found only later (here: an API without the site) leave the Location saying why, never a 404', async () => {
    // The same routes over the same control plane, without the site: the checks fall to the workflows' first states.
    const blind = await listenApi(
      createApi({ controlPlane: runtime, environments: runtime.environments, environmentUpgrades: runtime.environmentUpgrades, runStarts: runtime.runStarts }),
    );
    const blindRequest = (method: string, path: string, body?: unknown) => call(runtime, blind.url, method, path, body);
    try {
      const session = await blindRequest('POST', '/sessions', upgradeRequest({ upgradeTemplateId: 'no-such-image' }));
      expect(session.status).toBe(201);
      const refused = await eventually(
        runtime,
        async () =>
          (await request('GET', session.headers.get('location')!)).body.state === 'REFUSED'
            ? (await request('GET', session.headers.get('location')!)).body
            : undefined,
        'the refusal',
      );
      expect(startedSessionSchema.parse(refused)).toMatchObject({
        upgradeId: session.body.id,
        state: 'REFUSED',
        refused: {
          error: 'InvalidInputError',
          problems: [{ field: 'upgradeTemplateId', message: "boot template 'no-such-image' does not exist: the boot service has img-1, img-2" }],
        },
        messages: ["Upgrade session refused - upgradeTemplateId: boot template 'no-such-image' does not exist: the boot service has img-1, img-2"],
        // On simulated time a start record's createdAt is the instant its run starts from, never a date.
        createdAt: { secondsFromStart: 0, timeBase: 'simulated' },
        wallCreatedAt: expect.any(String),
      });
      expect((await request('DELETE', `/sessions/${session.body.id}`)).body).toEqual({
        id: session.body.id,
        kind: 'upgrade',
        state: 'REFUSED',
        running: false,
        removed: true,
      });
      expectProblem(await request('GET', `/sessions/${session.body.id}`), 404);

      const deployment = await blindRequest('POST', '/deployments', { nodes: ['no-such-node'] });
      expect(deployment.status).toBe(201);
      const refusedDeployment = await eventually(
        runtime,
        async () =>
          (await request('GET', `/deployments/${deployment.body.id}`)).body.status === 'REFUSED'
            ? (await request('GET', `/deployments/${deployment.body.id}`)).body
            : undefined,
        'the refusal',
      );
      expect(startedDeploymentSchema.parse(refusedDeployment)).toMatchObject({
        status: 'REFUSED',
        refused: { problems: [{ field: 'nodes[0]', message: "unknown node 'no-such-node'" }] },
        createdAt: { secondsFromStart: 0, timeBase: 'simulated' },
      });
    } finally {
      await blind.close();
    }
  });
});

describe('environments over HTTP (Fuel upgrade seed)', () => {
  it('lists and gets environments with generated attributes masked; 404 for an unknown id', async () => {
    const listed = await request('GET', '/environments');
    expect(listed.status).toBe(200);
    expect(listed.body.map((e: unknown) => environmentSchema.parse(e).name)).toEqual(expect.arrayContaining(['prod', 'legacy', 'idle']));
    expect(JSON.stringify(listed.body)).not.toMatch(/s3cret|r00t/);
    const prod = await request('GET', '/environments/1');
    expect(prod.body.attributes.generated).toEqual({ keystone: { admin_token: MASKED_VALUE }, mysql: { root_password: MASKED_VALUE } });
    expectProblem(await request('GET', '/environments/99'), 404);
    expectProblem(await request('GET', '/environments/abc'), 404);
    expectProblem(await request('POST', '/environments/1'), 405);
  });

  it('clone: 400, 404, 409, then 200 with the seed, then 405 for a second clone and for cloning the seed', async () => {
    const clone = (id: number | string, body: unknown) => request('POST', `/environments/${id}/upgrade/clone`, body);
    expectProblem(await clone(1, 'not json'), 400);
    expectProblem(await clone(1, { name: 'prod-8.0' }), 400, ['release_id']);
    expectProblem(await clone(1, { name: '', release_id: 'two' }), 400, ['name', 'release_id']);
    expectProblem(await clone(99, { name: 'x', release_id: 2 }), 404);
    expectProblem(await clone(1, { name: 'x', release_id: 99 }), 404, ['release_id']);
    // As Nailgun: a name another environment has is a 409 (AlreadyExists), before anything is written.
    expect(expectProblem(await clone(1, { name: 'legacy', release_id: 2 }), 409, ['name']).errors?.[0]?.message).toMatch(
      /^environment \d+ is named 'legacy' already$/,
    );
    // As Nailgun: a seed needs a newer release than the original's (here its own).
    expect(expectProblem(await clone(1, { name: 'x', release_id: 1 }), 400, ['release_id']).errors?.[0]?.message).toContain(
      'is not newer than release 1 (2015.1.0-7.0)',
    );
    const conflict = expectProblem(await clone(2, { name: 'legacy-8.0', release_id: 2 }), 409, [
      'attributes.editable.storage.iser',
      'attributes.editable.common.nova_quota',
    ]);
    expect(conflict.detail).toContain('editable.storage.iser');

    const seeded = await clone(1, { name: 'prod-8.0', release_id: 2 });
    expect(seeded.status).toBe(200);
    const seed = environmentSchema.parse(seeded.body);
    expect(seed).toMatchObject({ name: 'prod-8.0', release_id: 2, original_cluster_id: 1, status: 'new', nodes: [] });
    expect(seed.attributes).toEqual({
      editable: { common: { debug: { value: false } }, compute: { libvirt_type: { value: 'kvm' } } },
      generated: { keystone: { token: MASKED_VALUE }, mysql: { root_password: MASKED_VALUE } },
    });
    // Copied in clear into the store, never returned so.
    expect((await runtime.environments.getEnvironment(seed.id))?.environment.attributes.generated).toEqual({
      keystone: { token: 's3cret-token' },
      mysql: { root_password: 'r00t' },
    });
    expect((await request('GET', `/environments/${seed.id}`)).body).toEqual(seeded.body);

    expect(expectProblem(await clone(1, { name: 'again', release_id: 2 }), 405).detail).toContain(`its upgrade seed is environment ${seed.id}`);
    expectProblem(await clone(seed.id, { name: 'seed-of-seed', release_id: 2 }), 405);
    expectProblem(await request('GET', `/environments/1/upgrade/clone`), 405);

    // assign, on this seed
    const assign = (id: number | string, body: unknown) => request('POST', `/environments/${id}/upgrade/assign`, body);
    expectProblem(await assign(seed.id, {}), 400, ['node_id']);
    expectProblem(await assign(seed.id, '{'), 400);
    expectProblem(await assign(99, { node_id: 11 }), 404);
    expectProblem(await assign(seed.id, { node_id: 999 }), 404, ['node_id']);
    expectProblem(await assign(seed.id, { node_id: 21 }), 405, ['node_id']);
    expectProblem(await assign(3, { node_id: 11 }), 405);
    const role = expectProblem(await assign(seed.id, { node_id: 13 }), 409, ['roles']);
    expect(role.detail).toContain("role 'mongo'");

    const assigned = await assign(seed.id, { node_id: 11 });
    expect(assigned.status).toBe(200);
    expect(assignedNodeSchema.parse(assigned.body)).toEqual({
      id: 11,
      name: 'node-11',
      roles: ['controller'],
      ip: '10.20.0.11',
      mac: '52:54:00:00:00:11',
      cluster_id: seed.id,
    });
    expect((await request('GET', `/environments/${seed.id}`)).body.nodes.map((n: { id: number }) => n.id)).toEqual([11]);
    expect((await request('GET', '/environments/1')).body.nodes.map((n: { id: number }) => n.id)).toEqual([12, 13]);
    // Assigned once: it is no longer in the original.
    expectProblem(await assign(seed.id, { node_id: 11 }), 405);
  });

  it('of concurrent clones of one environment exactly one gets 200, the others 405', async () => {
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => request('POST', '/environments/3/upgrade/clone', { name: `idle-${i}`, release_id: 2 })),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([200, 405, 405, 405, 405, 405, 405, 405]);
    const winner = replies.find((r) => r.status === 200)!;
    expect(await runtime.environments.seedOf(3)).toBe(winner.body.id);
    const seeds = (await request('GET', '/environments')).body.filter((e: { original_cluster_id?: number }) => e.original_cluster_id === 3);
    expect(seeds).toHaveLength(1);
  });
});
