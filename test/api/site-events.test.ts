import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServedControlPlane, type ServedControlPlane } from '../../local/serve';
import { drainSpool, relayDeliver, spoolFiring } from '../../local/site-relay';
import type { TriggerFiring } from '../../simulator/models/trigger-manager';
import { checkContract } from '../support/api-contract';
import { runCliInProcess, type CliResult } from '../support/cli';
import { SimulatedSide } from '../support/slurm-differential';
import { buildSite } from '../support/sites';

/**
 * POST /site-events over real HTTP against `rollout serve`'s API, as the relay delivers to it: idempotent by the
 * firing's id (the same firing twice: one recorded event), a bad body a 422 naming the field; and the relay run as
 * slurmctld runs a strigger program, by the simulated strigger's firings.
 */

let served: ServedControlPlane;
let api: string;
let spool: string;
beforeAll(async () => {
  served = await startServedControlPlane({ site: { kind: 'simulated', definition: buildSite(2) } });
  api = served.endpoints.apiEndpoint!;
});
afterAll(async () => {
  await served.close();
});
beforeEach(async () => {
  spool = await mkdtemp(path.join(tmpdir(), 'relay-spool-'));
});
afterEach(async () => {
  await rm(spool, { recursive: true, force: true });
});

interface RecordedEvent {
  id: string;
  event: string;
  nodes: string[];
  firedAt: string;
  receivedAt: string;
}
/** A call to the API whose answer is checked against its OpenAPI document (status, content type, body); answers its status and body. */
async function call(method: 'GET' | 'POST', body?: unknown): Promise<{ status: number; json(): Promise<unknown> }> {
  const response = await fetch(`${api}/site-events`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const parsed: unknown = await response.json();
  checkContract(method, '/site-events', response.status, response.headers.get('content-type'), parsed);
  return { status: response.status, json: async () => parsed };
}
const recorded = async (): Promise<RecordedEvent[]> => (await (await call('GET')).json()) as RecordedEvent[];
const post = (body: unknown) => call('POST', body);
const recordedIds = async (ids: string[]) => (await recorded()).filter((event) => ids.includes(event.id));

describe('POST /site-events on rollout serve', () => {
  test("a command's end (event command, from SSM's invocation notification): recorded once, the node it checked as its nodes", async () => {
    const end = { id: 'command:0001-x:i-00000000000000001:Success', event: 'command', nodes: ['c01'], session: 'run-1', firedAt: '2026-11-29T01:00:00.000Z' };
    expect((await post(end)).status).toBe(201);
    expect((await post(end)).status).toBe(200);
    expect(await recordedIds([end.id])).toEqual([expect.objectContaining({ event: 'command', nodes: ['c01'], session: 'run-1' })]);
  });

  test('the same firing twice: 201 then 200 duplicate, one recorded event with its nodes expanded', async () => {
    const firing = { id: 'up-0001', event: 'up', nodes: 'c[01-03],d7', firedAt: '2026-11-29T01:00:00.000Z' };
    const first = await post(firing);
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ id: 'up-0001', recorded: true, duplicate: false, woke: false });
    const second = await post(firing);
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ id: 'up-0001', recorded: false, duplicate: true, woke: false });
    const events = await recordedIds(['up-0001']);
    expect(events).toEqual([{ id: 'up-0001', event: 'up', nodes: ['c01', 'c02', 'c03', 'd7'], firedAt: firing.firedAt, receivedAt: expect.any(String) }]);
  });

  test('a second delivery with other content but the same id changes nothing either', async () => {
    await post({ id: 'drained-0002', event: 'drained', nodes: ['c01'], firedAt: '2026-11-29T01:00:00.000Z' });
    const again = await post({ id: 'drained-0002', event: 'down', nodes: ['c02'], firedAt: '2026-11-29T02:00:00.000Z' });
    expect(again.status).toBe(200);
    expect(await recordedIds(['drained-0002'])).toEqual([expect.objectContaining({ event: 'drained', nodes: ['c01'] })]);
  });

  test('bad fields: a 422 naming each (an event strigger has no flag for, a hostlist that does not parse, no firedAt)', async () => {
    const bad = await post({ id: 'x-1', event: 'idle', nodes: 'c[01-', extra: 1 });
    expect(bad.status).toBe(422);
    const fields = ((await bad.json()) as { errors: { field: string }[] }).errors.map((e) => e.field).sort();
    expect(fields).toEqual(['event', 'extra', 'firedAt']);
    const hostlist = await post({ id: 'x-2', event: 'up', nodes: 'c[01-', firedAt: '2026-11-29T01:00:00Z' });
    expect(hostlist.status).toBe(422);
    expect(((await hostlist.json()) as { errors: { field: string }[] }).errors.map((e) => e.field)).toEqual(['nodes']);
  });

  test('the relay: a firing delivered, then the same firing again from the spool (its answer lost): one event', async () => {
    const now = () => new Date('2026-11-29T01:30:00.000Z');
    const { firing, outcome } = await relayDeliver({ spool, event: 'up', hostlist: 'c[01-02]', endpoint: api, now });
    expect(outcome).toEqual({ delivered: true, duplicate: false });
    // As if the acknowledgement had been lost: the same firing still spooled, delivered again by a drain.
    await spoolFiring(spool, { event: 'up', hostlist: 'c[01-02]', firedAt: now() });
    const drained = await drainSpool({ spool, endpoint: api, maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 });
    expect(drained).toEqual({ delivered: 1, duplicates: 1, rejected: 0, remaining: 0, attempts: 1 });
    expect(await recordedIds([firing.body.id])).toEqual([expect.objectContaining({ event: 'up', nodes: ['c01', 'c02'] })]);
    expect(await readdir(spool)).toEqual([]);
  });
});

describe('the relay as the simulated strigger program', () => {
  let side: SimulatedSide;
  afterEach(() => side?.stop());

  /**
   * What slurmctld does with a firing (trigger_mgr.c _trigger_run_program): the program split at spaces, its
   * path run with the other words, the hostlist last. Here the path's command is `rollout`, run in process.
   */
  function runPrograms(): { runs: Promise<CliResult>[] } {
    const runs: Promise<CliResult>[] = [];
    side.simulator.workloadManager.triggers.onFiring((firing: TriggerFiring) => {
      if (firing.outcome !== 'ran') return;
      const [, ...words] = firing.program.split(' ').filter(Boolean);
      runs.push(runCliInProcess([...words, firing.hostlist]));
    });
    return { runs };
  }

  test('two nodes drained by one command: one firing, one run of `rollout relay deliver`, one recorded event of both', async () => {
    side = await SimulatedSide.start({
      nodes: ['c01', 'c02', 'c03'].map((name, i) => ({ name, nid: i + 1 })),
      bootTemplates: ['img-2'],
      timing: { bootSeconds: 1, returnSeconds: 1 },
      slurm: { version: '24.11.5', accountingStorage: 'none' },
    });
    const { runs } = runPrograms();
    const program = `/usr/local/bin/rollout relay deliver --event drained --spool ${spool} --endpoint ${api}`;
    const set = await side.run(['strigger', '--set', '--node', '--drained', `--program=${program}`, '--flags=PERM']);
    expect(set).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await side.run(['scontrol', 'update', 'NodeName=c[02-03]', 'State=DRAIN', 'Reason=upgrade'])).code).toBe(0);
    for (let second = 0; second < 17 && runs.length === 0; second++) {
      side.advance(1);
      await side.run(['strigger', '--get']);
    }
    expect(side.simulator.workloadManager.triggers.firings.map((f) => [f.event, f.hostlist, f.outcome])).toEqual([['drained', 'c[02-03]', 'ran']]);
    const results = await Promise.all(runs);
    expect(results.map((r) => [r.code, r.stderr])).toEqual([[0, '']]);
    const events = (await recorded()).filter((e) => e.event === 'drained' && e.nodes.join() === 'c02,c03');
    expect(events).toHaveLength(1);
    expect(await readdir(spool)).toEqual([]);
  });
});
