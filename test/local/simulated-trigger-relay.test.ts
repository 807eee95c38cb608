import { relayProgram, type SiteEvent } from '../../core/site/site-event';
import { EmbeddedRuntime } from '../../local/embedded-runtime';
import { relaySimulatedTriggers } from '../../local/simulated-trigger-relay';
import { firingId } from '../../local/site-relay';
import { TRIGGER_PASS_MS, TriggerManagerModel } from '../../simulator/models/trigger-manager';
import { Timeline } from '../../simulator/timeline';
import { makeSession } from '../support/dynamodb';
import { pollUntil } from '../support/simulator';
import { buildSite } from '../support/sites';

/**
 * The in-process relay of a simulated site (local/simulated-trigger-relay.ts): the simulated strigger's firings of a
 * session's relay program reach takeSiteEvent as the real relay's would (the same id, the session's, nodes expanded,
 * at the pass's time); a lost or failing program, or one that is not a session's relay, delivers nothing.
 */

const START = Date.parse('2026-11-29T01:00:00.000Z');
const RELAY = '/usr/local/bin/rollout relay deliver --spool /var/spool/rollout-relay';
const NODES = ['c01', 'c02', 'c03', 'c04'];

/** A strigger over four nodes on a hand-moved clock, and a fake intake: the store records ids once, the control plane counts wakes. */
function setUp() {
  let now = START;
  const timeline = new Timeline({ now: () => now });
  const triggers = new TriggerManagerModel(timeline, () => NODES, START);
  const recorded: SiteEvent[] = [];
  const wakes: string[] = [];
  const taken: { id: string; recorded: boolean; woke: boolean }[] = [];
  const lines: string[] = [];
  let storeAway = false;
  const unsubscribe = relaySimulatedTriggers(triggers, {
    // The passes are run by hand here (site.pass): the relay's own wake at each pass never comes.
    clock: { now: () => now, sleep: () => new Promise<void>(() => {}), busy: (work) => work() },
    siteEvents: {
      record: async (event) => {
        if (storeAway) throw new Error('the table is away');
        if (recorded.some((e) => e.id === event.id)) return false;
        recorded.push(event);
        return true;
      },
      list: async () => recorded,
    },
    controlPlane: { wakeForSiteEvent: async (session) => (wakes.push(session), { woke: true }) },
    onTaken: (event, intake) => taken.push({ id: event.id, recorded: intake.recorded, woke: intake.woke }),
    report: (line) => lines.push(line),
  });
  const set = (event: 'up' | 'down' | 'drained', program: string, nodes?: string[]) => {
    const trigger = triggers.set({ event, resId: nodes ? nodes.join(',') : '*', program, perm: true, user: 'root' }, nodes);
    if (typeof trigger === 'string') throw new Error(trigger);
  };
  /** Moves the clock past the next trigger pass and runs it; lets the intake's promises settle. */
  const pass = async () => {
    now += TRIGGER_PASS_MS;
    timeline.sync();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    triggers,
    recorded,
    wakes,
    taken,
    lines,
    set,
    pass,
    unsubscribe,
    storeAway: (away: boolean) => (storeAway = away),
  };
}

test("two sessions' triggers firing for the same nodes in one pass: two events, each its session's, with the relay's id and the pass's time", async () => {
  const site = setUp();
  site.set('up', relayProgram(RELAY, 'up', 'upgrade-a'), ['c01', 'c02', 'c03']);
  site.set('up', relayProgram(RELAY, 'up', 'upgrade-b'), ['c01', 'c02', 'c03']);
  // Someone else's trigger on the same nodes: not a session's relay, delivers nothing.
  site.set('up', '/usr/local/sbin/page-the-admin', ['c01', 'c02', 'c03']);
  site.triggers.nodeEvent('up', 'c01');
  site.triggers.nodeEvent('up', 'c02');
  site.triggers.nodeEvent('up', 'c04');
  await site.pass();
  const firedAt = new Date(START + TRIGGER_PASS_MS).toISOString();
  expect(site.triggers.firings.map((f) => [f.hostlist, f.outcome])).toEqual([
    ['c[01-02]', 'ran'],
    ['c[01-02]', 'ran'],
    ['c[01-02]', 'ran'],
  ]);
  expect(site.recorded).toEqual(
    ['upgrade-a', 'upgrade-b'].map((session) => ({
      id: firingId('up', 'c[01-02]', firedAt, session),
      event: 'up',
      nodes: ['c01', 'c02'],
      session,
      firedAt,
      receivedAt: firedAt,
    })),
  );
  expect(site.wakes).toEqual(['upgrade-a', 'upgrade-b']);
  expect(site.taken.map((t) => [t.recorded, t.woke])).toEqual([
    [true, true],
    [true, true],
  ]);
  expect(site.lines).toEqual([]);
});

test('a lost firing and a failing program deliver nothing; the next that runs does', async () => {
  const site = setUp();
  site.set('drained', relayProgram(RELAY, 'drained', 's1'));
  site.triggers.faults.loseFirings = 1;
  site.triggers.nodeEvent('drained', 'c03');
  await site.pass();
  site.triggers.faults.failProgram = true;
  site.triggers.nodeEvent('drained', 'c03');
  await site.pass();
  expect(site.triggers.firings.map((f) => f.outcome)).toEqual(['lost', 'failed']);
  expect(site.recorded).toEqual([]);
  site.triggers.faults.failProgram = false;
  site.triggers.nodeEvent('drained', 'c04');
  await site.pass();
  expect(site.recorded.map((e) => [e.event, e.nodes, e.session])).toEqual([['drained', ['c04'], 's1']]);
  expect(site.wakes).toEqual(['s1']);
});

test('a store that fails is reported (the backstop poll covers the firing); after the unsubscribe nothing is delivered', async () => {
  const site = setUp();
  site.set('down', relayProgram(RELAY, 'down', 's2'));
  site.storeAway(true);
  site.triggers.nodeEvent('down', 'c02');
  await site.pass();
  expect(site.lines).toEqual([expect.stringMatching(/^down-[0-9a-f]{32}: not taken: the table is away$/)]);
  expect(site.wakes).toEqual([]);
  site.storeAway(false);
  site.unsubscribe();
  site.triggers.nodeEvent('down', 'c01');
  await site.pass();
  expect(site.triggers.firings.map((f) => f.outcome)).toEqual(['ran', 'ran']);
  expect(site.recorded).toEqual([]);
});

test("on an embedded runtime's simulator: a session's trigger firing is recorded, with the relay's id, and counted on its session", async () => {
  const runtime = await EmbeddedRuntime.start({ site: buildSite(2) });
  try {
    await runtime.store.createSession(makeSession({ upgradeId: 'sim-session' }), []);
    const { triggers } = runtime.simulator.simulator.workloadManager;
    const taken: SiteEvent[] = [];
    const unsubscribe = relaySimulatedTriggers(triggers, {
      clock: runtime.clock,
      siteEvents: runtime.siteEvents,
      controlPlane: runtime,
      onTaken: (event) => taken.push(event),
    });
    const [node] = runtime.simulator.simulator.workloadManager.list();
    const set = triggers.set({ event: 'drained', resId: '*', program: relayProgram(RELAY, 'drained', 'sim-session'), perm: true, user: 'root' }, undefined);
    expect(typeof set).toBe('object');
    triggers.nodeEvent('drained', node!.name);
    // Virtual time: past the next trigger pass, which the relay runs at its time (nothing else reads the site).
    await runtime.clock.sleep(TRIGGER_PASS_MS / 1000);
    await pollUntil(async () => (taken.length > 0 ? true : undefined));
    unsubscribe();
    const firedAt = new Date(triggers.firings[0]!.at).toISOString();
    expect(await runtime.siteEvents.list()).toEqual([
      {
        id: firingId('drained', node!.name, firedAt, 'sim-session'),
        event: 'drained',
        nodes: [node!.name],
        session: 'sim-session',
        firedAt,
        receivedAt: firedAt,
      },
    ]);
    expect((await runtime.store.getSession('sim-session'))?.siteEventCount).toBe(1);
  } finally {
    await runtime.close();
  }
});
