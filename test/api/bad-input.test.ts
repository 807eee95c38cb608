import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { createApi, type ApiControlPlane, type ApiHandler, type ApiRequest } from '../../api';
import { MAX_DOCUMENT_DEPTH } from '../../core/document-text';
import { MAX_SESSION_ID_LENGTH } from '../../core/execution-id';
import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { toLambdaHandler } from '../../lambdas/entrypoints/api';
import { checkContract } from '../support/api-contract';
import { startServedApi, type ApiReply } from '../support/api';
import { runCliInProcess } from '../support/cli';
import { eventually } from '../support/embedded';
import { buildSite, upgradeRequest } from '../support/sites';

/**
 * Bad input never reaches a 500, on both transports of the one API: `rollout serve` (HTTP) and the
 * API Gateway Lambda (its proxy event, over the same routes): a body nested past MAX_DOCUMENT_DEPTH
 * (400), an id longer than any id can be (404, before any lookup), a body that is not JSON (415).
 */
let served: Awaited<ReturnType<typeof startServedApi>>;
let runtime: EmbeddedRuntime;
let lambda: ReturnType<typeof toLambdaHandler>;

const LONG_ID = 'x'.repeat(3000);
const nested = (depth: number) => `{"startingLabel":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;

type Send = (method: string, path: string, body?: string, contentType?: string | null) => Promise<ApiReply>;

/** `rollout serve`'s REST API over HTTP. */
const overHttp: Send = (method, path, body, contentType = 'application/json') =>
  runtime.clock.busy(async () => {
    const response = await fetch(`${served.apiEndpoint}${path}`, {
      method,
      ...(body === undefined ? {} : { body: Buffer.from(body), headers: contentType === null ? {} : { 'content-type': contentType } }),
    });
    const text = await response.text();
    const reply = { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
    checkContract(method, path, reply.status, response.headers.get('content-type'), reply.body);
    return reply;
  });

/** The API Lambda: API Gateway's proxy event in, its result out. */
const overLambda: Send = (method, path, body, contentType = 'application/json') =>
  runtime.clock.busy(async () => {
    const result = await lambda({
      httpMethod: method,
      path,
      body: body ?? null,
      isBase64Encoded: false,
      headers: contentType === null ? {} : { 'Content-Type': contentType },
    });
    const reply = { status: result.statusCode, headers: new Headers(result.headers), body: result.body ? JSON.parse(result.body) : undefined };
    checkContract(method, path, reply.status, reply.headers.get('content-type'), reply.body);
    return reply;
  });

beforeAll(async () => {
  served = await startServedApi(buildSite(2));
  runtime = served.runtime;
  lambda = toLambdaHandler(() =>
    createApi({ controlPlane: runtime, environments: runtime.environments, environmentUpgrades: runtime.environmentUpgrades, runStarts: runtime.runStarts }),
  );
});
afterAll(() => served.close());

describe.each([
  ['rollout serve', () => overHttp],
  ['the API Lambda', () => overLambda],
])('%s', (_transport, transport) => {
  const send: Send = (...args) => transport()(...args);

  it(`refuses a body nested deeper than ${MAX_DOCUMENT_DEPTH} levels with a 400 naming the limit, before parsing it`, async () => {
    // 10 KB nested 5,000 deep overflowed the strict reader's stack (a 500).
    for (const path of ['/sessions', '/deployments', '/task-runs', '/environments', '/releases', '/environments/1/upgrade/clone']) {
      const reply = await send('POST', path, nested(5000));
      expect({ path, status: reply.status }).toEqual({ path, status: 400 });
      expect(reply.body.detail).toContain(`nested more than ${MAX_DOCUMENT_DEPTH} levels deep at line 1`);
    }
    // A deployment's strategy may be YAML text inside the JSON: the same limit, named under its field.
    const strategy = `groups:\n${'- '.repeat(1000)}x\n`;
    const yaml = await send('POST', '/deployments', JSON.stringify({ strategy }));
    expect(yaml.status).toBe(422);
    expect(yaml.body.errors).toEqual([
      { field: 'strategy', message: expect.stringContaining(`invalid YAML: nested more than ${MAX_DOCUMENT_DEPTH} levels deep`) },
    ]);
    // A task run's graph is YAML text too: the same limit, named under its field.
    const graph = await send('POST', '/task-runs', JSON.stringify({ graph: `tasks:\n${'- '.repeat(1000)}x\n` }));
    expect(graph.status).toBe(422);
    expect(graph.body.errors).toEqual([{ field: 'graph', message: expect.stringContaining(`nested more than ${MAX_DOCUMENT_DEPTH} levels deep`) }]);
    // Just within the limit, the body is read (and then refused for what it says).
    expect((await send('POST', '/sessions', nested(MAX_DOCUMENT_DEPTH - 1))).status).toBe(422);
  });

  it(`answers 404 naming the limit for an id over ${MAX_SESSION_ID_LENGTH} characters, before any lookup`, async () => {
    for (const [method, path] of [
      ['GET', `/sessions/${LONG_ID}`],
      ['DELETE', `/sessions/${LONG_ID}`],
      ['GET', `/deployments/${LONG_ID}`],
      ['DELETE', `/deployments/${LONG_ID}`],
      ['GET', `/task-runs/${LONG_ID}`],
      ['DELETE', `/task-runs/${LONG_ID}`],
      ['POST', `/task-runs/${LONG_ID}/resume`],
      ['GET', `/environments/${LONG_ID}`],
    ] as const) {
      const reply = await send(method, path);
      expect({ method, path: path.slice(0, 20), status: reply.status }).toEqual({ method, path: path.slice(0, 20), status: 404 });
      expect(reply.body.detail).toContain(`an id is at most ${MAX_SESSION_ID_LENGTH} characters, this one has 3000`);
    }
    // At the limit, an id is looked up (and is unknown).
    expect((await send('GET', `/sessions/${'x'.repeat(MAX_SESSION_ID_LENGTH)}`)).status).toBe(404);
    expect((await send('POST', `/task-runs/${'x'.repeat(MAX_SESSION_ID_LENGTH)}/stop`)).body.detail).toBe(
      `no task run with id '${'x'.repeat(MAX_SESSION_ID_LENGTH)}'`,
    );
  });

  it('answers 415 for a body that is not application/json, and reads nothing of it', async () => {
    const body = JSON.stringify(upgradeRequest());
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', null]) {
      const reply = await send('POST', '/sessions', body, type);
      expect({ type, status: reply.status }).toEqual({ type, status: 415 });
      expect(reply.headers.get('accept-post')).toBe('application/json');
      expect(reply.body.detail).toBe(
        `the body must be application/json (UTF-8); the request has ${type === null ? 'no Content-Type' : `Content-Type ${type}`}`,
      );
    }
    expect((await send('POST', '/deployments', '{"nodes":["n000"]}', 'text/plain')).status).toBe(415);
    // JSON is JSON whatever the case of its type, with a UTF-8 charset or none.
    expect((await send('POST', '/sessions', JSON.stringify(upgradeRequest({ upgradeStepSize: 0 })), 'Application/JSON; charset="UTF-8"')).status).toBe(422);
  });
});

describe('removing an ended session while it is read', () => {
  const finished = async () => {
    const created = await overHttp('POST', '/sessions', JSON.stringify(upgradeRequest()));
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await eventually(runtime, async () => ((await runtime.store.getSession(id))?.state === 'READY' ? true : undefined), 'READY');
    return id;
  };

  it('never shows it PENDING: a read right after the session item went answers 404', async () => {
    const id = await finished();
    const seen: ApiReply[] = [];
    // The control plane removes the session; a GET lands right after, before the DELETE answers.
    const controlPlane: ApiControlPlane = {
      ...(runtime as unknown as ApiControlPlane),
      sessions: () => runtime.sessions(),
      session: (sessionId) => runtime.session(sessionId),
      cancel: (sessionId) => runtime.cancel(sessionId),
      status: (sessionId) => runtime.status(sessionId),
      run: (workflow, input) => runtime.run(workflow, input),
      startEnvironmentUpgrade: (input, name) => runtime.startEnvironmentUpgrade(input, name),
      environmentUpgradeId: (name) => runtime.environmentUpgradeId(name),
      now: () => runtime.now(),
      removeSession: async (sessionId) => {
        const removed = await runtime.removeSession(sessionId);
        const got = await api({ method: 'GET', path: `/sessions/${sessionId}` });
        seen.push({ status: got.status, headers: new Headers(got.headers), body: got.body });
        return removed;
      },
    };
    const api: ApiHandler = createApi({
      controlPlane,
      environments: runtime.environments,
      environmentUpgrades: runtime.environmentUpgrades,
      runStarts: runtime.runStarts,
    });
    const removed = await runtime.clock.busy(() => api({ method: 'DELETE', path: `/sessions/${id}` }));
    expect(removed.status).toBe(200);
    expect(seen.map((reply) => ({ status: reply.status, state: reply.body?.state }))).toEqual([{ status: 404, state: undefined }]);
  });

  it('never shows a report whose session went while it was read: 404', async () => {
    const id = await finished();
    // The removal lands while the report is being built (after the session item was read).
    const controlPlane = {
      ...(runtime as unknown as ApiControlPlane),
      session: async (sessionId: string) => {
        const view = await runtime.session(sessionId);
        await runtime.removeSession(sessionId);
        return view;
      },
      status: (sessionId: string) => runtime.status(sessionId),
    } as ApiControlPlane;
    const api = createApi({ controlPlane, environments: runtime.environments, environmentUpgrades: runtime.environmentUpgrades, runStarts: runtime.runStarts });
    const got = await runtime.clock.busy(() => api({ method: 'GET', path: `/sessions/${id}` } satisfies ApiRequest));
    expect({ status: got.status }).toEqual({ status: 404 });
  });
});

describe('the CLI and the Step Functions endpoint', () => {
  it(`rollout session get with an id over ${MAX_SESSION_ID_LENGTH} characters exits 2 naming the limit`, async () => {
    const endpoint = served.endpoints.stepFunctionsEndpoint;
    for (const command of [
      ['session', 'get'],
      ['session', 'cancel'],
      ['session', 'watch'],
    ]) {
      const result = await runCliInProcess([...command, LONG_ID, '--endpoint', endpoint]);
      expect({ command, code: result.code }).toEqual({ command, code: 2 });
      expect(result.stderr).toContain(`(3000 characters; ids are at most ${MAX_SESSION_ID_LENGTH})`);
    }
  });

  it(`refuses an execution input nested deeper than ${MAX_DOCUMENT_DEPTH} levels as AWS refuses bad input (InvalidExecutionInput)`, async () => {
    const sfn = new SFNClient({ endpoint: served.endpoints.stepFunctionsEndpoint, region: 'local', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    try {
      const start = sfn.send(
        new StartExecutionCommand({ stateMachineArn: served.endpoints.stateMachines.rollingUpgrade, input: `[${'['.repeat(5000)}${']'.repeat(5000)}]` }),
      );
      await expect(start).rejects.toMatchObject({
        name: 'InvalidExecutionInput',
        message: expect.stringContaining(`nested more than ${MAX_DOCUMENT_DEPTH} levels deep`),
      });
    } finally {
      sfn.destroy();
    }
  });
});
