import { createApi } from '../../api';
import { listenApi } from '../../api/node-http';
import { problemSchema } from '../../api/problems';
import {
  startedRunSchema,
  startedTaskRunSchema,
  stopResultSchema,
  taskRunCancelResultSchema,
  taskRunReportSchema,
  taskRunSummarySchema,
} from '../../api/schemas';
import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { parseSiteDefinition } from '../../simulator';
import { toLambdaHandler } from '../../lambdas/entrypoints/api';
import { checkContract } from '../support/api-contract';
import { call, startServedApi, type ApiReply } from '../support/api';
import { eventually } from '../support/embedded';
import { groupTaskRunId } from '../../core/task-graph';
import { groupOf } from '../support/deployment-sites';
import { drainRebootResumeGraph, EXAMPLE_GRAPH, exampleSite } from '../support/task-graph-runs';

/**
 * Task runs over the REST API as `rollout serve` serves it (real HTTP, virtual time; every answer checked
 * against the OpenAPI document by `call`): POST /task-runs takes what `rollout deploy --graph` sends.
 */
const NODES = Array.from({ length: 4 }, (_, i) => `c${i + 1}`);
const GRAPH = drainRebootResumeGraph('cos-2.4');
/** Two nodes at a time: a stop or cancel while the first two reboot leaves the other two untouched. */
const REQUEST = { graph: GRAPH, maxInTransition: 2, pollIntervalSeconds: 10 };

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

const status = async (id: string) => (await runtime.taskRuns.getRun(id))?.status;
const until = (id: string, want: string) => eventually(runtime, async () => ((await status(id)) === want ? true : undefined), want);
/** Waits for the first reboot task to run on the site: the run is in flight, two nodes drained. */
const rebooting = () =>
  eventually(
    runtime,
    async () => (runtime.simulator.state().taskLog.some((e) => e.task === 'reboot_compute' && e.end === undefined) ? true : undefined),
    'a reboot task running',
  );

beforeAll(async () => {
  served = await startServedApi(
    parseSiteDefinition({
      nodes: NODES.map((name, i) => ({ name, nid: i + 1, roles: ['compute'] })),
      bootTemplates: ['cos-2.4'],
      timing: { bootSeconds: 120, returnSeconds: 10 },
    }),
  );
  runtime = served.runtime;
});
afterAll(() => served.close());

describe('task runs over HTTP', () => {
  it('start (201 + Location) -> get (progress and report) -> stop (200 STOPPING, then STOPPED) -> resume (202) -> SUCCEEDED; resume is a 409 while it runs and once it has ended; DELETE removes it', async () => {
    const created = await request('POST', '/task-runs', REQUEST);
    expect(created.status).toBe(201);
    const { id } = startedRunSchema.parse(created.body);
    expect(created.body).toMatchObject({ kind: 'tasks' });
    expect(created.headers.get('location')).toBe(`/task-runs/${id}`);
    await rebooting();

    const running = taskRunReportSchema.parse((await request('GET', `/task-runs/${id}`)).body);
    expect(running).toMatchObject({ runId: id, status: 'RUNNING', nodeCount: 4, timeBase: 'simulated', settings: { maxInTransition: 2 } });
    // A simulated instant is seconds from the run's start, never a date; the wall clock says when it was created.
    expect(running.createdAt).toEqual({ secondsFromStart: 0, timeBase: 'simulated' });
    expect(Date.parse(running.wallCreatedAt!)).not.toBeNaN();
    expect(Object.keys(running.nodes).sort()).toEqual(NODES);
    expect(running.nodes['c1']).toEqual(expect.objectContaining({ drain_compute: expect.any(String), reboot_compute: expect.any(String) }));
    expect(running.elapsedSeconds).toBeUndefined();

    // An execution runs it: a resume would start a second one over the same nodes.
    expect(expectProblem(await request('POST', `/task-runs/${id}/resume`), 409).detail).toContain('rollout session stop');
    const stopped = await request('POST', `/task-runs/${id}/stop`);
    expect(stopped.status).toBe(200);
    expect(stopResultSchema.parse(stopped.body)).toEqual({ id, kind: 'tasks', state: 'STOPPING', running: true });
    await until(id, 'STOPPED');
    const atStop = taskRunReportSchema.parse((await request('GET', `/task-runs/${id}`)).body);
    expect(atStop.status).toBe('STOPPED');
    // The two nodes in flight finished their reboot; the other two were left as they were.
    expect(runtime.simulator.state().taskLog.every((e) => e.end !== undefined)).toBe(true);
    expect(atStop.counts['ACTIVE']).toBeLessThan(12);
    expectProblem(await request('POST', `/task-runs/${id}/stop`), 409);

    const resumed = await request('POST', `/task-runs/${id}/resume`);
    expect(resumed.status).toBe(202);
    expect(resumed.headers.get('location')).toBe(`/task-runs/${id}`);
    expect(startedRunSchema.parse(resumed.body)).toMatchObject({ id, kind: 'tasks' });
    await until(id, 'SUCCEEDED');
    const ended = taskRunReportSchema.parse((await request('GET', `/task-runs/${id}`)).body);
    expect(ended).toMatchObject({ status: 'SUCCEEDED', counts: { ACTIVE: 12, ERROR: 0 } });
    expect(ended.elapsedSeconds).toBeGreaterThan(0);
    expect(ended.messages).toEqual(expect.arrayContaining(['Task run STOPPED', 'Resumed after a stop']));
    for (const node of NODES) expect(runtime.simulator.state().nodes[node]).toMatchObject({ drainCount: 1, bootCount: 1, resumeCount: 1 });

    const listed = await request('GET', '/task-runs');
    expect(listed.status).toBe(200);
    const entry = listed.body.map((run: unknown) => taskRunSummarySchema.parse(run)).find((run: { runId: string }) => run.runId === id);
    expect(entry).toMatchObject({ status: 'SUCCEEDED', createdAt: { secondsFromStart: 0, timeBase: 'simulated' } });
    expect(entry).not.toHaveProperty('schedule');
    // A task run is not a session nor a deployment.
    expectProblem(await request('GET', `/sessions/${id}`), 404);
    expectProblem(await request('POST', `/deployments/${id}/stop`), 404);

    expect(expectProblem(await request('POST', `/task-runs/${id}/resume`), 409).detail).toBe(`task run ${id} has ended (SUCCEEDED): nothing to resume`);
    expectProblem(await request('POST', `/task-runs/${id}/stop`), 409);
    // Ended, it is removed by a DELETE, with its plan, task states and messages.
    const removed = await request('DELETE', `/task-runs/${id}`);
    expect(taskRunCancelResultSchema.parse(removed.body)).toEqual({ id, kind: 'tasks', state: 'SUCCEEDED', running: false, removed: true });
    expect(await runtime.taskRuns.getRun(id)).toBeUndefined();
    expect(await runtime.taskRuns.messages.list(id)).toEqual([]);
    expectProblem(await request('GET', `/task-runs/${id}`), 404);
  });

  it('cancel (DELETE: 200 CANCELLING; a second DELETE while it is being cancelled is a 409): the reboots in flight finish, nothing starts after, the drains it made are lifted, it ends CANCELLED', async () => {
    const created = await request('POST', '/task-runs', REQUEST);
    const id = created.body.id as string;
    await rebooting();

    const { cancelled, again } = await runtime.clock.busy(async () => ({
      cancelled: await request('DELETE', `/task-runs/${id}`),
      again: await request('DELETE', `/task-runs/${id}`),
    }));
    expect(cancelled.status).toBe(200);
    expect(taskRunCancelResultSchema.parse(cancelled.body)).toEqual({ id, kind: 'tasks', state: 'CANCELLING', running: true });
    expect(expectProblem(again, 409).detail).toBe(`task run ${id} is being cancelled: it is removed by a DELETE once it has ended`);
    await until(id, 'CANCELLED');

    const report = taskRunReportSchema.parse((await request('GET', `/task-runs/${id}`)).body);
    expect(report.status).toBe('CANCELLED');
    // No node was left drained by the run.
    for (const node of NODES) expect(runtime.simulator.state().nodes[node]!.wlmState).toMatch(/^IDLE\*?$/);
    expectProblem(await request('POST', `/task-runs/${id}/stop`), 409);
    expect(expectProblem(await request('POST', `/task-runs/${id}/resume`), 409).detail).toBe(`task run ${id} has ended (CANCELLED): nothing to resume`);
    expect((await request('DELETE', `/task-runs/${id}`)).body).toMatchObject({ state: 'CANCELLED', removed: true });
  });

  it('404 naming the id for a run no task run has, on every route; 405 naming what a route allows', async () => {
    for (const [method, path] of [
      ['GET', '/task-runs/no-such-run'],
      ['DELETE', '/task-runs/no-such-run'],
      ['POST', '/task-runs/no-such-run/stop'],
      ['POST', '/task-runs/no-such-run/resume'],
    ] as const)
      expect(expectProblem(await request(method, path), 404).detail).toBe("no task run with id 'no-such-run'");
    expect((await request('PUT', '/task-runs')).headers.get('allow')).toBe('GET, POST, HEAD');
    expect((await request('PUT', '/task-runs/x')).headers.get('allow')).toBe('GET, DELETE, HEAD');
    expect((await request('GET', '/task-runs/x/resume')).headers.get('allow')).toBe('POST');
  });

  it('a bad body is refused before anything starts: 400 naming where it is broken, 422 naming each field at fault', async () => {
    const executions = () => runtime.engine.listExecutions(runtime.stateMachineArns.TaskGraph).length;
    const before = executions();
    // Not strict JSON (a duplicate key), not an object: 400.
    expect(expectProblem(await request('POST', '/task-runs', '{"graph": "a", "graph": "b"}'), 400, ['graph']).detail).toContain('duplicate key');
    expectProblem(await request('POST', '/task-runs', '[1]'), 400);
    // The request's fields, the graph's, the selection's, each named.
    expectProblem(await request('POST', '/task-runs', { ...REQUEST, maxInTransition: 0, colour: 'blue' }), 422, ['maxInTransition', 'colour']);
    expectProblem(await request('POST', '/task-runs', { maxInTransition: 2 }), 422, ['graph']);
    const cyclic = `tasks:\n  - {id: a, type: drain, role: [compute], requires: [b]}\n  - {id: b, type: resume, role: [compute], requires: [a]}\n`;
    const graphProblem = expectProblem(await request('POST', '/task-runs', { graph: cyclic }), 422);
    expect(graphProblem.errors?.every((e) => e.field.startsWith('graph'))).toBe(true);
    expectProblem(await request('POST', '/task-runs', { ...REQUEST, selection: { start: 'no_such_task' } }), 422, ['selection.start']);
    // Planned over the site's nodes: an unknown node is named.
    const unknown = expectProblem(await request('POST', '/task-runs', { ...REQUEST, selection: { nodes: ['nope'] } }), 422);
    expect(JSON.stringify(unknown.errors)).toContain('nope');
    expect(executions()).toBe(before);
  });

  it("found only by the workflow (an API without the site): the Location answers PENDING, then REFUSED saying why (createdAt the run's start on simulated time), never a 404", async () => {
    const blind = await listenApi(
      createApi({ controlPlane: runtime, environments: runtime.environments, environmentUpgrades: runtime.environmentUpgrades, runStarts: runtime.runStarts }),
    );
    try {
      const created = await call(runtime, blind.url, 'POST', '/task-runs', { ...REQUEST, selection: { nodes: ['nope'] } });
      expect(created.status).toBe(201);
      const location = created.headers.get('location')!;
      const refused = await eventually(
        runtime,
        async () => {
          const body = (await request('GET', location)).body;
          return body.status === 'REFUSED' ? body : undefined;
        },
        'the refusal',
      );
      const start = startedTaskRunSchema.parse(refused);
      expect(start).toMatchObject({ runId: created.body.id, status: 'REFUSED', refused: { error: 'InvalidInputError' } });
      expect(JSON.stringify(start.refused?.problems)).toContain('nope');
      expect(start.messages[0]).toMatch(/^Task run refused - .*nope/);
      expect(start.createdAt).toEqual({ secondsFromStart: 0, timeBase: 'simulated' });
      expect(Date.parse(start.wallCreatedAt!)).not.toBeNaN();
      expect((await request('DELETE', location)).body).toEqual({ id: created.body.id, kind: 'tasks', state: 'REFUSED', running: false, removed: true });
      expectProblem(await request('GET', location), 404);
    } finally {
      await blind.close();
    }
  });

  it('the API Lambda (API Gateway proxy events) serves the same routes: start, read, cancel, remove', async () => {
    const lambda = toLambdaHandler(() =>
      createApi({
        controlPlane: runtime,
        environments: runtime.environments,
        environmentUpgrades: runtime.environmentUpgrades,
        runStarts: runtime.runStarts,
        site: runtime.site,
      }),
    );
    const send = (httpMethod: string, path: string, body?: unknown) =>
      runtime.clock.busy(async () => {
        const result = await lambda({
          httpMethod,
          path,
          body: body === undefined ? null : JSON.stringify(body),
          headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
        });
        const reply = { status: result.statusCode, location: result.headers['location'], body: result.body ? JSON.parse(result.body) : undefined };
        checkContract(httpMethod, path, reply.status, result.headers['content-type'] ?? null, reply.body);
        return reply;
      });
    const created = await send('POST', '/task-runs', REQUEST);
    expect(created).toMatchObject({ status: 201, location: `/task-runs/${created.body.id}`, body: { kind: 'tasks' } });
    const id = created.body.id as string;
    await rebooting();
    expect((await send('GET', `/task-runs/${id}`)).body).toMatchObject({ runId: id, status: 'RUNNING' });
    expect((await send('GET', '/task-runs')).body.map((run: { runId: string }) => run.runId)).toContain(id);
    expect((await send('DELETE', `/task-runs/${id}`)).body).toEqual({ id, kind: 'tasks', state: 'CANCELLING', running: true });
    await until(id, 'CANCELLED');
    expect((await send('DELETE', `/task-runs/${id}`)).body).toMatchObject({ state: 'CANCELLED', removed: true });
    expect((await send('GET', `/task-runs/${id}`)).status).toBe(404);
  });
});

describe("a group deployment's deploy phase over HTTP", () => {
  it('is a task run to read (its deployment named), not listed among task runs, and removed with its deployment only (409)', async () => {
    const groupServed = await startServedApi(exampleSite());
    const send = (method: string, path: string, body?: unknown) => call(groupServed.runtime, groupServed.apiEndpoint, method, path, body);
    try {
      const strategy = { groups: [groupOf('control-plane', ['node-1', 'node-4'])] };
      const created = await send('POST', '/deployments', { strategy, taskGraph: { graph: EXAMPLE_GRAPH }, pollIntervalSeconds: 10 });
      expect(created.status).toBe(201);
      const deploymentId = created.body.id as string;
      await eventually(
        groupServed.runtime,
        async () => ((await groupServed.runtime.deployments.getDeployment(deploymentId))?.status === 'SUCCEEDED' ? true : undefined),
        'the deployment to end',
      );
      const runId = groupTaskRunId(deploymentId, 'control-plane');
      const report = taskRunReportSchema.parse((await send('GET', `/task-runs/${runId}`)).body);
      expect(report).toMatchObject({ status: 'SUCCEEDED', deployment: { deploymentId, group: 'control-plane' } });
      expect((await send('GET', '/task-runs')).body.map((run: { runId: string }) => run.runId)).not.toContain(runId);
      expect(expectProblem(await send('DELETE', `/task-runs/${runId}`), 409).detail).toBe(
        `task run ${runId}: it is the deploy phase of group 'control-plane' of deployment ${deploymentId}: it is removed with its deployment`,
      );
      // Removing the deployment removes its groups' deploy phases: nothing is left behind.
      expect((await send('DELETE', `/deployments/${deploymentId}`)).body).toMatchObject({ removed: true });
      expectProblem(await send('GET', `/task-runs/${runId}`), 404);
      expect(await groupServed.runtime.taskRuns.getRun(runId)).toBeUndefined();
    } finally {
      await groupServed.close();
    }
  });
});
