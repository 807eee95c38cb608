import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseSiteProfile } from '../../core/site/site-profile';
import type { SiteEvent } from '../../core/site/site-event';
import type { SiteEventStore } from '../../ports/site-event-store';
import { EmbeddedRuntime } from '../../local/embedded-runtime';
import { openRuntime } from '../../local/open-runtime';
import { startSiteEventSpoolIntake, type SiteEventSpoolIntake } from '../../local/site-event-spool';
import { REJECTED_FOLDER, spoolFiring } from '../../local/site-relay';
import { SimClock, startSiteSimulator } from '../../simulator';
import { siteProfileFor } from '../../simulator/site-profile-for';
import { makeSession } from '../support/dynamodb';
import { pollUntil } from '../support/simulator';
import { buildSite } from '../support/sites';

/**
 * The relay's spool read by the control plane on its own host (local/site-event-spool.ts, a profile's
 * siteEvents.spool): a firing spooled is taken at once (fs.watch), recorded once and counted on its session (its
 * wake called); the same firing again changes nothing; a half-written (temporary) file is never read; what is not
 * a firing goes to rejected/. Wired into the embedded runtime of a profile with siteEvents.spool.
 */

const FIRED_AT = new Date('2026-11-29T01:00:00.000Z');
const files = async (dir: string) => (await readdir(dir)).filter((name) => name !== REJECTED_FOLDER).sort();

let spool: string;
beforeEach(async () => {
  spool = await mkdtemp(path.join(tmpdir(), 'spool-intake-'));
});
afterEach(async () => {
  await rm(spool, { recursive: true, force: true });
});

describe('the spool intake over an embedded runtime', () => {
  let runtime: EmbeddedRuntime;
  let intake: SiteEventSpoolIntake | undefined;
  let wakes: string[];
  const SESSION = 'spool-session-1';
  beforeAll(async () => {
    runtime = await EmbeddedRuntime.start({ site: buildSite(2) });
    await runtime.store.createSession(makeSession({ upgradeId: SESSION }), []);
  });
  afterAll(async () => {
    await runtime.close();
  });
  beforeEach(() => {
    wakes = [];
  });
  afterEach(async () => {
    await intake?.close();
    intake = undefined;
  });
  /** The intake over the runtime's store, its wakes counted; the rescan far off unless asked: fs.watch alone brings firings in. */
  const start = (rescanMs = 600_000, siteEvents: SiteEventStore = runtime.siteEvents) =>
    startSiteEventSpoolIntake({
      spool,
      siteEvents,
      controlPlane: { wakeForSiteEvent: (id) => (wakes.push(id), runtime.wakeForSiteEvent(id)) },
      rescanMs,
    });
  const eventCount = async () => (await runtime.store.getSession(SESSION))?.siteEventCount ?? 0;
  const recorded = async (id: string) => (await runtime.siteEvents.list()).filter((event) => event.id === id);

  test('a firing spooled for a session is taken within a second: recorded with its nodes expanded, its session woken once, its file removed', async () => {
    intake = await start();
    const before = await eventCount();
    const started = Date.now();
    const { body } = await spoolFiring(spool, { event: 'up', hostlist: 'c[01-02]', session: SESSION, firedAt: FIRED_AT });
    await pollUntil(async () => ((await files(spool)).length === 0 ? true : undefined), 2000);
    console.log(`a spooled firing taken by fs.watch in ${Date.now() - started} ms`);
    expect(await recorded(body.id)).toEqual([
      { id: body.id, event: 'up', nodes: ['c01', 'c02'], session: SESSION, firedAt: FIRED_AT.toISOString(), receivedAt: expect.any(String) },
    ]);
    expect(wakes).toEqual([SESSION]);
    expect(await eventCount()).toBe(before + 1);
  });

  test('the same firing spooled again (its first taking lost its answer): taken, removed, and nothing changes', async () => {
    intake = await start();
    const firing = { event: 'drained' as const, hostlist: 'c01', session: SESSION, firedAt: FIRED_AT };
    const { body } = await spoolFiring(spool, firing);
    await pollUntil(async () => ((await files(spool)).length === 0 ? true : undefined), 2000);
    const count = await eventCount();
    const [first] = await recorded(body.id);
    expect(wakes).toEqual([SESSION]);
    await spoolFiring(spool, firing);
    await pollUntil(async () => ((await files(spool)).length === 0 ? true : undefined), 2000);
    expect(await recorded(body.id)).toEqual([first]);
    expect(wakes).toEqual([SESSION]);
    expect(await eventCount()).toBe(count);
  });

  test('a file written half (its temporary name) is never read; what is not a firing the control plane takes goes to rejected/', async () => {
    const half = '.001795914000000-up-0123.json.4242.tmp';
    await writeFile(path.join(spool, half), '{"id":"up-0123","ev');
    await writeFile(path.join(spool, '001795914000001-broken.json'), '{"id":');
    await writeFile(
      path.join(spool, '001795914000002-up-bad.json'),
      JSON.stringify({ id: 'up-bad', event: 'up', nodes: 'c[01-', firedAt: FIRED_AT.toISOString() }),
    );
    const lines: string[] = [];
    intake = await startSiteEventSpoolIntake({
      spool,
      siteEvents: runtime.siteEvents,
      controlPlane: runtime,
      rescanMs: 600_000,
      report: (line) => lines.push(line),
    });
    await intake.scan();
    expect(await files(spool)).toEqual([half]);
    expect((await readdir(path.join(spool, REJECTED_FOLDER))).sort()).toEqual(['001795914000001-broken.json', '001795914000002-up-bad.json']);
    expect(lines).toEqual([expect.stringMatching(/broken\.json: not a firing the control plane takes/), expect.stringMatching(/up-bad\.json: .*nodes/)]);
    expect(await recorded('up-bad')).toEqual([]);
  });

  test('firings spooled while nothing read the spool are taken at start; one the store fails to take stays for the next pass', async () => {
    const { body } = await spoolFiring(spool, { event: 'down', hostlist: 'c02', firedAt: FIRED_AT });
    let failing = true;
    const flaky = {
      record: (event: SiteEvent) => (failing ? Promise.reject(new Error('the table is away')) : runtime.siteEvents.record(event)),
      list: () => runtime.siteEvents.list(),
    };
    intake = await start(600_000, flaky);
    expect(await intake.scan()).toEqual({
      taken: 0,
      duplicates: 0,
      woke: 0,
      rejected: 0,
      failed: expect.stringMatching(/not taken, left in the spool: the table is away/),
    });
    expect(await files(spool)).toHaveLength(1);
    failing = false;
    expect(await intake.scan()).toMatchObject({ taken: 1, duplicates: 0 });
    expect(await recorded(body.id)).toHaveLength(1);
    // No session: recorded only, nobody woken.
    expect(wakes).toEqual([]);
  });

  test("a spool not there yet is left for the relay to create (as slurmctld's user); once it is, its firings are taken; a file is refused", async () => {
    const later = path.join(spool, 'made-by-the-relay');
    intake = await startSiteEventSpoolIntake({ spool: later, siteEvents: runtime.siteEvents, controlPlane: runtime, rescanMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await readdir(spool)).toEqual([]);
    const { body } = await spoolFiring(later, { event: 'up', hostlist: 'c01', firedAt: new Date(FIRED_AT.getTime() + 7) });
    await pollUntil(async () => ((await files(later)).length === 0 ? true : undefined), 2000);
    expect(await recorded(body.id)).toHaveLength(1);
    const file = path.join(spool, 'a-file');
    await writeFile(file, '');
    await expect(startSiteEventSpoolIntake({ spool: file, siteEvents: runtime.siteEvents, controlPlane: runtime })).rejects.toThrow(
      `${file} is not a directory`,
    );
  });

  test('read again every rescanMs as well as on fs.watch; after close nothing is taken', async () => {
    intake = await start(50);
    await spoolFiring(spool, { event: 'up', hostlist: 'c03', firedAt: FIRED_AT });
    await pollUntil(async () => ((await files(spool)).length === 0 ? true : undefined), 2000);
    await intake.close();
    intake = undefined;
    await spoolFiring(spool, { event: 'up', hostlist: 'c04', firedAt: FIRED_AT });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await files(spool)).toHaveLength(1);
  });
});

describe('a runtime over a site profile with siteEvents.spool (`rollout upgrade --site-config`, `rollout serve --site-config`)', () => {
  test('takes the firings the relay spools on this host, no endpoint needed; closing it stops reading', async () => {
    const TIME_SCALE = 100;
    const simulator = await startSiteSimulator({ site: buildSite(2), clock: new SimClock({ timeScale: TIME_SCALE }) });
    const profile = parseSiteProfile({
      ...siteProfileFor(simulator.urls, 'ssm', TIME_SCALE),
      workloadManager: { type: 'scontrol', siteEvents: { relay: `/usr/local/bin/rollout relay deliver --spool ${spool}`, spool } },
    });
    const runtime = await openRuntime({ site: { kind: 'profile', profile, baseDir: spool } });
    try {
      await runtime.store.createSession(makeSession({ upgradeId: 'profile-session' }), []);
      const { body } = await spoolFiring(spool, { event: 'up', hostlist: 'c[01-02]', session: 'profile-session', firedAt: FIRED_AT });
      await pollUntil(async () => ((await files(spool)).length === 0 ? true : undefined), 3000);
      expect((await runtime.siteEvents.list()).filter((event) => event.id === body.id)).toEqual([
        expect.objectContaining({ nodes: ['c01', 'c02'], session: 'profile-session' }),
      ]);
      expect((await runtime.store.getSession('profile-session'))?.siteEventCount).toBe(1);
    } finally {
      await runtime.close();
      await simulator.close();
    }
    await spoolFiring(spool, { event: 'up', hostlist: 'c03', firedAt: FIRED_AT });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await files(spool)).toHaveLength(1);
  });

  test('a spool that cannot be read (a file) refuses the runtime, naming workloadManager.siteEvents.spool', async () => {
    const simulator = await startSiteSimulator({ site: buildSite(2), clock: new SimClock({ timeScale: 100 }) });
    const file = path.join(spool, 'a-file');
    await writeFile(file, '');
    const profile = parseSiteProfile({
      ...siteProfileFor(simulator.urls, 'ssm', 100),
      workloadManager: { type: 'scontrol', siteEvents: { relay: `/usr/local/bin/rollout relay deliver --spool ${file}`, spool: file } },
    });
    try {
      await expect(openRuntime({ site: { kind: 'profile', profile, baseDir: spool } })).rejects.toMatchObject({
        problems: [{ field: 'workloadManager.siteEvents.spool', message: expect.stringContaining('is not a directory') }],
      });
    } finally {
      await simulator.close();
    }
  });
});
