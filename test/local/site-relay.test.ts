import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  backoffDelayMs,
  deliverFiring,
  drainSpool,
  firingId,
  relayDeliver,
  REJECTED_FOLDER,
  removeStaleTemporaries,
  siteEventsUrl,
  spooledFirings,
  spoolFiring,
  STALE_TEMPORARY_MS,
} from '../../local/site-relay';
import { PROJECT_ROOT } from '../../contracts/paths';
import { runCliInProcess } from '../support/cli';
import { startSilentEndpoint } from '../support/silent-endpoint';

/**
 * The site relay's spool (local/site-relay.ts, `rollout relay`): each firing written whole (temp file renamed),
 * named by its time and id; one quick delivery that never holds the caller past its timeout, whatever the
 * endpoint does; the retry of the spool with backoff, a firing removed only once acknowledged.
 */

let spool: string;
beforeEach(async () => {
  spool = await mkdtemp(path.join(tmpdir(), 'relay-spool-'));
});
afterEach(async () => {
  await rm(spool, { recursive: true, force: true });
});

const FIRED_AT = new Date('2026-11-29T01:00:00.000Z');
const files = async (dir = spool) => (await readdir(dir)).sort();

/** An HTTP endpoint answering POST /site-events with the statuses given, in turn (the last repeated); records the bodies. */
async function startStub(statuses: number[]): Promise<{ url: string; bodies: unknown[]; close(): Promise<void> }> {
  const bodies: unknown[] = [];
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      bodies.push({ path: request.url, body: JSON.parse(text) as unknown, authorization: request.headers.authorization });
      const status = statuses[Math.min(bodies.length - 1, statuses.length - 1)]!;
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ status }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, bodies, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A port nothing listens on: a stub opened and closed at once. */
async function deadEndpoint(): Promise<string> {
  const stub = await startStub([201]);
  await stub.close();
  return stub.url;
}

describe('the spool', () => {
  test('a firing is one whole file named by its time and id, no temporary file left; its body is what POST /site-events takes', async () => {
    const { file, body } = await spoolFiring(spool, { event: 'up', hostlist: 'c[01-03]', firedAt: FIRED_AT });
    const id = firingId('up', 'c[01-03]', FIRED_AT.toISOString());
    expect(id).toMatch(/^up-[0-9a-f]{32}$/);
    expect(await files()).toEqual([`00${FIRED_AT.getTime()}-${id}.json`]);
    expect(path.basename(file)).toBe(`00${FIRED_AT.getTime()}-${id}.json`);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ id, event: 'up', nodes: 'c[01-03]', firedAt: '2026-11-29T01:00:00.000Z' });
    expect(body).toEqual({ id, event: 'up', nodes: 'c[01-03]', firedAt: '2026-11-29T01:00:00.000Z' });
  });

  test('the same firing spooled twice is one file with one id; another instant, event or hostlist is another firing', async () => {
    await spoolFiring(spool, { event: 'up', hostlist: 'c01', firedAt: FIRED_AT });
    await spoolFiring(spool, { event: 'up', hostlist: 'c01', firedAt: FIRED_AT });
    expect(await files()).toHaveLength(1);
    const later = new Date(FIRED_AT.getTime() + 1);
    await spoolFiring(spool, { event: 'up', hostlist: 'c01', firedAt: later });
    await spoolFiring(spool, { event: 'drained', hostlist: 'c01', firedAt: FIRED_AT });
    await spoolFiring(spool, { event: 'up', hostlist: 'c02', firedAt: FIRED_AT });
    const ids = (await spooledFirings(spool)).map((f) => f.body.id);
    expect(new Set(ids).size).toBe(4);
  });

  test("a session's firing carries it in its body and its id: two sessions' triggers firing for the same nodes at the same instant are two firings", async () => {
    const a = await spoolFiring(spool, { event: 'up', hostlist: 'c01', session: 'upgrade-a', firedAt: FIRED_AT });
    const b = await spoolFiring(spool, { event: 'up', hostlist: 'c01', session: 'upgrade-b', firedAt: FIRED_AT });
    const none = await spoolFiring(spool, { event: 'up', hostlist: 'c01', firedAt: FIRED_AT });
    expect(a.body).toEqual({
      id: firingId('up', 'c01', FIRED_AT.toISOString(), 'upgrade-a'),
      event: 'up',
      nodes: 'c01',
      session: 'upgrade-a',
      firedAt: FIRED_AT.toISOString(),
    });
    expect(JSON.parse(await readFile(a.file, 'utf8'))).toEqual(a.body);
    expect(new Set([a.body.id, b.body.id, none.body.id]).size).toBe(3);
    // Without a session the id is what it was before sessions were carried.
    expect(none.body.id).toBe(firingId('up', 'c01', FIRED_AT.toISOString()));
    expect((await spooledFirings(spool)).map((f) => f.body.session).sort()).toEqual(['upgrade-a', 'upgrade-b', undefined]);
  });

  test('listed oldest first; a writer cut short (its temporary file) and a file that is not a firing are not sent', async () => {
    await spoolFiring(spool, { event: 'down', hostlist: 'c02', firedAt: new Date(FIRED_AT.getTime() + 5000) });
    await spoolFiring(spool, { event: 'up', hostlist: 'c01', firedAt: FIRED_AT });
    await writeFile(path.join(spool, '.000000000000001-up-x.json.123.tmp'), '{"id":');
    await writeFile(path.join(spool, '000000000000002-broken.json'), '{"id":');
    const unreadable: string[] = [];
    const firings = await spooledFirings(spool, (file) => unreadable.push(path.basename(file)));
    expect(firings.map((f) => f.body.nodes)).toEqual(['c01', 'c02']);
    expect(unreadable).toEqual(['000000000000002-broken.json']);
  });

  test("a writer's temporary file is removed once stale (its writer died before the rename), not before", async () => {
    const fresh = path.join(spool, '.000000000000001-up-a.json.1.tmp');
    const stale = path.join(spool, '.000000000000001-up-b.json.2.tmp');
    await writeFile(fresh, '{');
    await writeFile(stale, '{');
    const old = new Date(Date.now() - STALE_TEMPORARY_MS - 60_000);
    await utimes(stale, old, old);
    expect(await removeStaleTemporaries(spool, Date.now())).toEqual([stale]);
    expect(await files()).toEqual([path.basename(fresh)]);
    expect(await removeStaleTemporaries(path.join(spool, 'none'), Date.now())).toEqual([]);
  });

  test('a spool directory that does not exist yet is created by the first firing, and lists empty before', async () => {
    const nested = path.join(spool, 'a', 'b');
    expect(await spooledFirings(nested)).toEqual([]);
    await spoolFiring(nested, { event: 'up', hostlist: 'c01', firedAt: FIRED_AT });
    expect(await files(nested)).toHaveLength(1);
  });
});

describe('relay deliver: one quick delivery, never blocking', () => {
  test('acknowledged (201): the file is removed; the endpoint got the firing at POST /site-events', async () => {
    const stub = await startStub([201]);
    try {
      const { firing, outcome } = await relayDeliver({ spool, event: 'drained', hostlist: 'c[01-02]', endpoint: stub.url, now: () => FIRED_AT });
      expect(outcome).toEqual({ delivered: true, duplicate: false });
      expect(await files()).toEqual([]);
      expect(stub.bodies).toEqual([{ path: '/site-events', body: firing.body }]);
    } finally {
      await stub.close();
    }
  });

  test('a dead endpoint: resolves at once with the firing left in the spool', async () => {
    const started = Date.now();
    const { outcome } = await relayDeliver({ spool, event: 'up', hostlist: 'c01', endpoint: await deadEndpoint(), timeoutMs: 2000 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(outcome).toEqual({ retry: expect.stringMatching(/ECONNREFUSED/) });
    expect(await files()).toHaveLength(1);
  });

  test('an endpoint that never answers: resolves at the timeout, the firing left in the spool', async () => {
    const silent = await startSilentEndpoint();
    try {
      const started = Date.now();
      const { outcome } = await relayDeliver({ spool, event: 'up', hostlist: 'c01', endpoint: silent.url, timeoutMs: 300 });
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(290);
      expect(elapsed).toBeLessThan(1500);
      expect(outcome).toEqual({ retry: 'no answer within 300 ms' });
      expect(await files()).toHaveLength(1);
    } finally {
      await silent.close();
    }
  });

  test('a 5xx leaves the firing to retry; a 422 moves it aside (retrying cannot help), out of the spool', async () => {
    const failing = await startStub([503]);
    const refusing = await startStub([422]);
    try {
      expect((await relayDeliver({ spool, event: 'up', hostlist: 'c01', endpoint: failing.url })).outcome).toEqual({ retry: 'HTTP 503' });
      expect(await files()).toHaveLength(1);
      const { firing, outcome } = await relayDeliver({ spool, event: 'up', hostlist: 'c02', endpoint: refusing.url, now: () => FIRED_AT });
      expect(outcome).toEqual({ rejected: expect.stringMatching(/^HTTP 422/) });
      expect(await files(path.join(spool, REJECTED_FOLDER))).toEqual([path.basename(firing.file)]);
      expect((await spooledFirings(spool)).map((f) => f.body.nodes)).toEqual(['c01']);
    } finally {
      await failing.close();
      await refusing.close();
    }
  });

  test('the CLI against a dead endpoint exits 0 within a second, saying the firing stays spooled', async () => {
    const endpoint = await deadEndpoint();
    const started = Date.now();
    const result = await runCliInProcess(['relay', 'deliver', '--event', 'down', '--spool', spool, '--endpoint', endpoint, 'c[01-04]']);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^down-[0-9a-f]{32}: not delivered \(.*ECONNREFUSED.*\): spooled in .* for `rollout relay drain`\n$/);
    const [firing] = await spooledFirings(spool);
    expect(firing?.body).toMatchObject({ event: 'down', nodes: 'c[01-04]' });
  });

  test('as slurmctld runs it (its own process, stdin, stdout and stderr closed): exits 0 with the firing spooled, against a dead endpoint', async () => {
    const endpoint = await deadEndpoint();
    const bin = path.join(PROJECT_ROOT, 'bin', 'rollout.js');
    // trigger_mgr.c closes every descriptor below 128 before it execs the program: the relay must not need them.
    const command = `"${process.execPath}" "${bin}" relay deliver --event up --spool "${spool}" --endpoint ${endpoint} 'c[01-02]' <&- >&- 2>&-`;
    const started = Date.now();
    const code = await new Promise<number | null>((resolve) =>
      execFile('bash', ['-c', command], (err) => resolve(err ? ((err as { code?: number }).code ?? null) : 0)),
    );
    const elapsed = Date.now() - started;
    console.log(`rollout relay deliver as a process, dead endpoint: ${elapsed} ms`);
    expect(code).toBe(0);
    // The process's start (the CLI's load, a rebuild after a source change) included: well under slurmctld's MAX_PROG_TIME of 300 s.
    expect(elapsed).toBeLessThan(20_000);
    expect((await spooledFirings(spool)).map((f) => f.body.nodes)).toEqual(['c[01-02]']);
  }, 30_000);

  test('the CLI without --endpoint only spools; --json prints the id, the file and the outcome', async () => {
    const result = await runCliInProcess(['relay', 'deliver', '--event', 'up', '--spool', spool, '--json', 'c01']);
    expect(result.code).toBe(0);
    const [firing] = await spooledFirings(spool);
    expect(JSON.parse(result.stdout)).toEqual({ id: firing!.body.id, file: firing!.file, outcome: { spooled: true } });
  });

  test('the CLI with --session (as a session sets its trigger): the spooled firing carries the session, its id includes it', async () => {
    const result = await runCliInProcess(['relay', 'deliver', '--event', 'drained', '--session', 'upgrade-1.a:b', '--spool', spool, '--json', 'c[01-02]']);
    expect(result.code).toBe(0);
    const [firing] = await spooledFirings(spool);
    expect(firing!.body).toEqual({
      id: firingId('drained', 'c[01-02]', firing!.body.firedAt, 'upgrade-1.a:b'),
      event: 'drained',
      nodes: 'c[01-02]',
      session: 'upgrade-1.a:b',
      firedAt: firing!.body.firedAt,
    });
  });

  test('the CLI refuses a --session that is not a session id, naming --session, and spools nothing', async () => {
    for (const session of ['a b', 'x;rm', 'é', 's'.repeat(129)]) {
      const result = await runCliInProcess(['relay', 'deliver', '--event', 'up', '--session', session, '--spool', spool, 'c01']);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--session must be a session id/);
    }
    expect(await files()).toEqual([]);
  });

  test('the CLI refuses an event strigger has no flag for, naming --event', async () => {
    const result = await runCliInProcess(['relay', 'deliver', '--event', 'idle', '--spool', spool, 'c01']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--event/);
    expect(await files()).toEqual([]);
  });
});

describe("the delivery's URL, its signer and API Gateway's refusals", () => {
  const firing = { id: 'up-1', event: 'up' as const, nodes: 'c01', firedAt: FIRED_AT.toISOString() };

  test("the route is under the API's base path: the stack's ApiUrl ends with its stage", () => {
    expect(siteEventsUrl('http://127.0.0.1:8084').href).toBe('http://127.0.0.1:8084/site-events');
    expect(siteEventsUrl('https://abc.execute-api.eu-west-1.amazonaws.com/v1/').href).toBe('https://abc.execute-api.eu-west-1.amazonaws.com/v1/site-events');
    expect(siteEventsUrl('https://abc.execute-api.eu-west-1.amazonaws.com/v1').href).toBe('https://abc.execute-api.eu-west-1.amazonaws.com/v1/site-events');
  });

  test('a signer signs the request as sent (its URL, method and body) and its headers are the ones sent', async () => {
    const stub = await startStub([201]);
    const signed: unknown[] = [];
    try {
      const outcome = await deliverFiring(`${stub.url}/v1/`, firing, 1000, async (request) => {
        signed.push({ method: request.method, url: request.url.href, body: request.body });
        return { ...request.headers, authorization: 'AWS4-HMAC-SHA256 stand-in' };
      });
      expect(outcome).toEqual({ delivered: true, duplicate: false });
      expect(signed).toEqual([{ method: 'POST', url: `${stub.url}/v1/site-events`, body: JSON.stringify(firing) }]);
      expect(stub.bodies).toEqual([{ path: '/v1/site-events', body: firing, authorization: 'AWS4-HMAC-SHA256 stand-in' }]);
    } finally {
      await stub.close();
    }
  });

  test('a signer that fails (no credentials) or hangs (a credential endpoint away) is a retry, within the timeout, with nothing sent', async () => {
    const stub = await startStub([201]);
    try {
      const failed = await deliverFiring(stub.url, firing, 1000, () => Promise.reject(new Error('Could not load credentials from any providers')));
      expect(failed).toEqual({ retry: 'cannot sign the delivery: Could not load credentials from any providers' });
      const started = Date.now();
      const hung = await deliverFiring(stub.url, firing, 200, () => new Promise(() => {}));
      expect(Date.now() - started).toBeLessThan(1000);
      expect(hung).toEqual({ retry: 'no answer within 200 ms' });
      expect(stub.bodies).toEqual([]);
    } finally {
      await stub.close();
    }
  });

  test("a 403 (API Gateway's IAM auth: a credential expired or not allowed) keeps the firing spooled for a retry, saying API Gateway's message", async () => {
    const server = createServer((_request, response) => {
      response.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'The security token included in the request is expired' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const { outcome } = await relayDeliver({ spool, event: 'up', hostlist: 'c01', endpoint });
      expect(outcome).toEqual({ retry: 'HTTP 403: The security token included in the request is expired' });
      expect((await spooledFirings(spool)).map((f) => f.body.nodes)).toEqual(['c01']);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('relay drain: retries with backoff until acknowledged', () => {
  test('backoff doubles from the initial delay up to the maximum', () => {
    expect([2, 3, 4, 5, 6, 7].map((attempt) => backoffDelayMs(attempt, 1000, 10_000))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
  });

  test('an endpoint failing twice then acknowledging: three passes, waits 10 then 20 ms, every firing delivered in order and removed', async () => {
    await spoolFiring(spool, { event: 'up', hostlist: 'c01', firedAt: FIRED_AT });
    await spoolFiring(spool, { event: 'up', hostlist: 'c02', firedAt: new Date(FIRED_AT.getTime() + 1000) });
    const stub = await startStub([503, 503, 201]);
    const waits: number[] = [];
    try {
      const result = await drainSpool({
        spool,
        endpoint: stub.url,
        maxAttempts: 5,
        initialDelayMs: 10,
        maxDelayMs: 1000,
        sleep: async (ms) => void waits.push(ms),
      });
      expect(result).toEqual({ delivered: 2, duplicates: 0, rejected: 0, remaining: 0, attempts: 3 });
      expect(waits).toEqual([10, 20]);
      // A pass stops at its first failure: c01 twice refused, then c01 and c02.
      expect(stub.bodies.map((b) => (b as { body: { nodes: string } }).body.nodes)).toEqual(['c01', 'c01', 'c01', 'c02']);
      expect(await files()).toEqual([]);
    } finally {
      await stub.close();
    }
  });

  test('a firing the control plane recorded before (200) counts as delivered, and is removed', async () => {
    await spoolFiring(spool, { event: 'drained', hostlist: 'c01', firedAt: FIRED_AT });
    const stub = await startStub([200]);
    try {
      const result = await drainSpool({ spool, endpoint: stub.url, maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 });
      expect(result).toEqual({ delivered: 1, duplicates: 1, rejected: 0, remaining: 0, attempts: 1 });
      expect(await files()).toEqual([]);
    } finally {
      await stub.close();
    }
  });

  test('an endpoint that stays away: the firings stay spooled after the attempts, and the CLI exits 1 saying so', async () => {
    await spoolFiring(spool, { event: 'up', hostlist: 'c01', firedAt: FIRED_AT });
    const endpoint = await deadEndpoint();
    const result = await drainSpool({ spool, endpoint, maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 1 });
    expect(result).toEqual({ delivered: 0, duplicates: 0, rejected: 0, remaining: 1, attempts: 3 });
    const cli = await runCliInProcess(['relay', 'drain', '--spool', spool, '--endpoint', endpoint, '--max-attempts', '2', '--initial-delay', '1']);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toBe('0 delivered (0 recorded before), 0 refused, 1 left in the spool after 2 passes\n');
    expect(cli.stderr).toMatch(/1 firing\(s\) not delivered: they stay in /);
    expect(await files()).toHaveLength(1);
  });
});
