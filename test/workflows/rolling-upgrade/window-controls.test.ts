import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { peakOutOfService as peak } from '../../../simulator/out-of-service';
import { BUSY_FLEET, busyFleetSite } from '../../../bench/busy-fleet';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { eventually, runUpgrade, startTestRuntime } from '../../support/embedded';
import { buildSessionReport } from '../../../control-plane/reports/session-report';
import { expandHostlist } from '../../../core/site/hostlist';

describe('mode window controls, end to end', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('drainAhead on a busy site whose jobs end before their time limits: never over the cap, no node drained twice', async () => {
    // Jobs keep arriving; each ends at 20-100% of its limit and the simulated Slurm reports the limit's end.
    // A node drained ahead could be idle without a slot the moment its job ended early, so none is drained
    // ahead of its slot: every node is drained once, when it takes its slot.
    const site = busyFleetSite({
      ...BUSY_FLEET,
      nodes: 24,
      jobSeconds: { median: 900, sigma: 1, max: 5400 },
      bootSeconds: 300,
      returnSeconds: 60,
      bootFailures: 0,
      nodesPerRack: 8,
      seed: 3,
    });
    expect(site.nodes.some((n) => (n.wlm.timeLimitSeconds ?? 0) > n.wlm.busySeconds)).toBe(true);
    runtime = await startTestRuntime({ site });
    const request = upgradeRequest({
      mode: 'window',
      maxUnavailable: 2,
      drainAhead: 6,
      order: 'idle-first',
      upgradeTemplateId: 'cos-2.4',
      pollIntervalSeconds: 60,
      quiesceTimeoutSeconds: 86400,
    });
    const { report, upgradeId } = await runUpgrade(runtime, request);

    expect(report).toMatchObject({ state: 'READY', completed: true });
    expect(report.counts).toMatchObject({ UPGRADED: 24, FAILED: 0 });
    const nodes = runtime.simulator.state().nodes;
    expect((await runtime.store.getSession(upgradeId))!.progress.window?.releasedAhead).toBeUndefined();
    for (const n of site.nodes) expect(nodes[n.name]).toMatchObject({ drainCount: 1, bootCount: 1, killedJobs: 0 });
    expect(peak(Object.values(nodes).flatMap((n) => n.outOfService))).toBeLessThanOrEqual(2);
    expect(runtime.simulator.state().violations).toEqual([]);
  }, 120_000);

  it('reserveSlots: each planned slot held by a maintenance reservation, none left once the run ends; never over the cap', async () => {
    // Jobs keep arriving on an idle fleet: without reservations nodes not yet upgraded pick up jobs of up to 90 min.
    const site = busyFleetSite({
      ...BUSY_FLEET,
      nodes: 16,
      busyAtStart: 0,
      jobSeconds: { median: 900, sigma: 1, max: 5400 },
      bootSeconds: 300,
      returnSeconds: 60,
      bootFailures: 0,
      nodesPerRack: 8,
      seed: 5,
    });
    runtime = await startTestRuntime({ site });
    const request = upgradeRequest({
      mode: 'window',
      maxUnavailable: 2,
      order: 'idle-first',
      reserveSlots: true,
      upgradeTemplateId: 'cos-2.4',
      pollIntervalSeconds: 60,
      quiesceTimeoutSeconds: 86400,
    });
    const { report, upgradeId } = await runUpgrade(runtime, request);

    expect(report).toMatchObject({ state: 'READY', completed: true });
    expect(report.counts).toMatchObject({ UPGRADED: 16, FAILED: 0 });
    const created = runtime.simulator.simulator.headNode.commandLog.filter((c) => c.includes("'create' 'reservation'"));
    // Every node but those started at the first increment had its slot held, under the session's name.
    const held = new Set(created.flatMap((c) => [...c.matchAll(/'Nodes=([^']+)'/g)].flatMap((m) => expandHostlist(m[1]!))));
    expect(held.size).toBeGreaterThanOrEqual(12);
    expect(created.every((c) => c.includes(`ReservationName=rollout-${upgradeId}-`))).toBe(true);
    expect(runtime.simulator.simulator.workloadManager.listReservations()).toEqual([]);
    const nodes = runtime.simulator.state().nodes;
    for (const n of site.nodes) expect(nodes[n.name]).toMatchObject({ drainCount: 1, bootCount: 1, killedJobs: 0 });
    expect(peak(Object.values(nodes).flatMap((n) => n.outOfService))).toBeLessThanOrEqual(2);
    expect((await runtime.store.getSession(upgradeId))!.progress.window?.slotSeconds).toBeGreaterThan(0);
    expect(runtime.simulator.state().violations).toEqual([]);
  }, 120_000);

  it('order idle-first: idle nodes first, then the busy ones by the shortest remaining job', async () => {
    const busy: Record<number, number> = { 0: 2000, 1: 1000, 2: 500 };
    runtime = await startTestRuntime({ site: buildSite(6, { node: (i) => (busy[i] ? { wlm: { state: 'ALLOCATED', busySeconds: busy[i] } } : {}) }) });
    const { report } = await runUpgrade(runtime, upgradeRequest({ mode: 'window', maxUnavailable: 1, order: 'idle-first' }));

    expect(report.counts).toMatchObject({ UPGRADED: 6 });
    const nodes = runtime.simulator.state().nodes;
    const outAt = (i: number) => nodes[nodeName(i)]!.outOfService[0]![0];
    const order = [0, 1, 2, 3, 4, 5].sort((a, b) => outAt(a) - outAt(b));
    expect(order).toEqual([3, 4, 5, 2, 1, 0]);
    for (let i = 0; i < 6; i++) expect(nodes[nodeName(i)]).toMatchObject({ drainCount: 1, bootCount: 1, killedJobs: 0 });
  });

  it('maxUnavailablePerRack: never more than that many nodes of one rack out of service, the global cap filled across racks', async () => {
    runtime = await startTestRuntime({ site: buildSite(8, { node: (i) => ({ rack: i < 4 ? 'rA' : 'rB' }) }) });
    const { report } = await runUpgrade(runtime, upgradeRequest({ mode: 'window', maxUnavailable: 4, maxUnavailablePerRack: 1 }));

    expect(report.counts).toMatchObject({ UPGRADED: 8 });
    const nodes = runtime.simulator.state().nodes;
    const rack = (from: number) => [0, 1, 2, 3].flatMap((i) => nodes[nodeName(from + i)]!.outOfService);
    expect(peak(rack(0))).toBe(1);
    expect(peak(rack(4))).toBe(1);
    // Both racks were worked on at once: the rack cap, not the global one, was the limit.
    expect(peak([...rack(0), ...rack(4)])).toBe(2);
  });

  it('more slots than a scan batch (maxUnavailable 40) with nodes that cannot start: each TODO node is looked at once, the run ends', async () => {
    // The plan-order scan looks at 40 nodes, then at the next ones, from where it stopped. It used to look
    // again from the 33rd, twice at the same nodes, and the run failed: "duplicate operation id".
    runtime = await startTestRuntime({ site: buildSite(80, { node: (i) => (i % 2 === 0 ? { alive: false } : {}) }) });
    const { report, outcome } = await runUpgrade(runtime, upgradeRequest({ mode: 'window', maxUnavailable: 40 }));

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report).toMatchObject({ state: 'READY', completed: true });
    expect(report.counts).toMatchObject({ UPGRADED: 40, FAILED: 0, NOT_STARTED: 40 });
  });

  it('maintenanceWindows: no node starts outside a window; a node in flight when it closes finishes', async () => {
    // Virtual time starts at 2026-01-01T00:00Z: the window opens at 00:30, 02:30, ... for 2 minutes each.
    runtime = await startTestRuntime({ site: buildSite(4) });
    const { report } = await runUpgrade(
      runtime,
      upgradeRequest({ mode: 'window', maxUnavailable: 1, maintenanceWindows: [{ cron: '30 */2 * * *', durationMinutes: 2, timeZone: 'UTC' }] }),
    );

    expect(report.counts).toMatchObject({ UPGRADED: 4 });
    const nodes = runtime.simulator.state().nodes;
    // Idle nodes go out of service at their drain: each start falls inside an open window (seconds since 00:00).
    const starts = [0, 1, 2, 3].map((i) => nodes[nodeName(i)]!.outOfService[0]![0]);
    for (const t of starts) {
      expect(t).toBeGreaterThanOrEqual(1800);
      expect((t - 1800) % 7200).toBeLessThan(120);
    }
    // 4 nodes of about 80 s each do not fit one 2-minute window: the run waited for a later one.
    expect(new Set(starts.map((t) => Math.floor((t - 1800) / 7200))).size).toBeGreaterThan(1);
    // One started before a window closed and came back after it: in-flight nodes finish.
    const ends = [0, 1, 2, 3].map((i) => nodes[nodeName(i)]!.outOfService[0]![1]!);
    expect(ends.some((t) => (t - 1800) % 7200 >= 120)).toBe(true);
  });

  it('a node marked unavailable mid-run is left alone, not failed; one already in flight finishes', async () => {
    runtime = await startTestRuntime({ site: buildSite(6) });
    const rt = runtime;
    const run = await rt.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 1 }));
    await eventually(
      rt,
      async () => ((await rt.store.listNodes(run.id)).some((n) => n.name === nodeName(0) && n.phase === 'BOOTING') ? true : undefined),
      'node 0 booting',
    );
    // The operator marks node 0 (in flight) and node 4 (not started) unavailable, through the simulator's inventory API.
    const setGates = (name: string) =>
      fetch(`${rt.simulator.urls.control}/sim/nodes/${name}/gates`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ available: false }),
      });
    await rt.clock.busy(async () => {
      for (const name of [nodeName(0), nodeName(4)]) expect((await setGates(name)).status).toBe(200);
    });
    expect((await run.outcome).status).toBe('SUCCEEDED');

    const report = await buildSessionReport(rt.store, (await rt.store.getSession(run.id))!);
    expect(report.nodes[nodeName(0)]).toMatchObject({ status: 'UPGRADED' });
    expect(report.nodes[nodeName(4)]).toMatchObject({ status: 'NOT_STARTED', reason: 'left alone: node-unavailable' });
    for (const i of [1, 2, 3, 5]) expect(report.nodes[nodeName(i)]).toMatchObject({ status: 'UPGRADED' });
    expect(report.counts.FAILED).toBe(0);
    const site = rt.simulator.state();
    expect(site.nodes[nodeName(4)]).toMatchObject({ drainCount: 0, bootCount: 0, wlmState: 'IDLE' });
    expect(site.groups.failed).toEqual([]);
  });
});
