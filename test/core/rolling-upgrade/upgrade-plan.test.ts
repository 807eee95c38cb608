import { planUpgrade, type PlannedNodeSite } from '../../../core/rolling-upgrade/upgrade-plan';
import { parseUpgradeRequest } from '../../../core/rolling-upgrade/upgrade-request';

const NOW = Date.UTC(2026, 0, 5, 12); // a Monday, 12:00 UTC
const base = {
  startingLabel: 'compute',
  upgradingLabel: 'upgrading',
  failedLabel: 'failed',
  upgradeStepSize: 2,
  upgradeTemplateId: 'img',
  workloadManagerType: 'slurm',
};
const idle = (rack?: string): PlannedNodeSite => ({ wlm: { name: 'x', base: 'IDLE', flags: [] }, alive: true, available: true, ...(rack ? { rack } : {}) });
const busy = (seconds: number): PlannedNodeSite => ({
  wlm: { name: 'x', base: 'ALLOCATED', flags: [] },
  alive: true,
  available: true,
  jobEndsAt: NOW + seconds * 1000,
});
const plan = (request: Record<string, unknown>, site: Record<string, PlannedNodeSite>) =>
  planUpgrade({
    request: parseUpgradeRequest({ ...base, ...request }),
    plan: Object.keys(site),
    site: new Map(Object.entries(site)),
    now: NOW,
    serviceSeconds: 60,
  });
const s = (ms: number) => (ms - NOW) / 1000;

describe('planUpgrade: the workflow scheduler run forward on the site as it is', () => {
  it('lock-step: steps in plan order, a step boots together at the first poll that finds its slowest node quiet, the next starts once it is back', () => {
    // Poll 30 s (the default): b's job ends at 100 s, the poll at 120 s finds it quiet, the step is back 60 s later.
    const planned = plan({}, { a: idle(), b: busy(100), c: idle(), d: idle() });
    expect(planned.waves.map((w) => [w.wave, w.nodes, s(w.startsAt), s(w.endsAt)])).toEqual([
      [1, ['a', 'b'], 0, 180],
      [2, ['c', 'd'], 180, 240],
    ]);
    expect(planned.nodes['b']).toMatchObject({
      wave: 1,
      drainAt: NOW,
      outOfServiceAt: NOW + 100_000,
      backAt: NOW + 180_000,
      gates: [`busy until ${new Date(NOW + 100_000).toISOString()}`],
    });
    // a is quiet at once and waits, out of service, for b: the step's outage is each of its nodes'.
    expect(planned.nodes['a']).toMatchObject({ drainAt: NOW, outOfServiceAt: NOW, backAt: NOW + 180_000, gates: [] });
    expect(planned).toMatchObject({ cap: 2, nodeCount: 4 });
    expect(s(planned.endsAt)).toBe(240);
  });

  it('window: each node boots at the first poll that finds it quiet, on its own', () => {
    const planned = plan({ mode: 'window', maxUnavailable: 2, pollIntervalSeconds: 30 }, { a: idle(), b: busy(100) });
    expect([s(planned.nodes['a']!.outOfServiceAt), s(planned.nodes['a']!.backAt)]).toEqual([0, 60]);
    expect([s(planned.nodes['b']!.outOfServiceAt), s(planned.nodes['b']!.backAt)]).toEqual([100, 180]);
  });

  it('window: refills a freed slot at once; a node not available is left alone; rack caps hold nodes back, and say so', () => {
    const planned = plan(
      { mode: 'window', maxUnavailable: 2, maxUnavailablePerRack: 1 },
      { a: idle('r1'), b: idle('r1'), c: idle('r2'), d: { ...idle('r2'), available: false }, e: idle('r3') },
    );
    expect(planned.leftAlone).toEqual({ d: 'node-unavailable' });
    expect(planned.waves).toHaveLength(1);
    expect(s(planned.nodes['a']!.drainAt)).toBe(0);
    expect(s(planned.nodes['c']!.drainAt)).toBe(0);
    // b waits for a (same rack), e for a free slot.
    expect(s(planned.nodes['b']!.drainAt)).toBe(60);
    expect(planned.nodes['b']!.gates).toContain('waited for its rack r1 (cap 1)');
    expect(s(planned.endsAt)).toBe(120);
  });

  it('starts only inside a maintenance window, and says what the wave waited for; admin drains are kept and said', () => {
    const planned = plan(
      { mode: 'window', maxUnavailable: 1, maintenanceWindows: [{ cron: '0 22 * * *', durationMinutes: 60 }] },
      { a: { ...idle(), wlm: { name: 'a', base: 'IDLE', flags: ['DRAIN'], reason: 'disk swap' } }, b: idle() },
    );
    expect(s(planned.waves[0]!.startsAt)).toBe(10 * 3600);
    expect(planned.waves[0]!.waits).toEqual([`maintenance window until ${new Date(NOW + 10 * 3600_000).toISOString()}`]);
    expect(planned.nodes['a']!.gates).toEqual(['admin-drained (disk swap): no drain of ours, its drain is kept']);
    expect(s(planned.nodes['b']!.drainAt)).toBe(10 * 3600 + 60);
  });
});
