import { ScontrolReservations } from '../../../../adapters/site/commands/scontrol-reservations';
import { SiteServiceError } from '../../../../core/errors';
import { reservationName } from '../../../../core/rolling-upgrade/slot-plan';
import { nodeNames, nodesOf } from '../../../support/simulator';
import { startSsmTestSite, type SsmTestSite } from '../../../support/ssm-site';

const names = nodeNames(4);
const clock = (t: SsmTestSite) => ({ now: () => t.site.simulator.clock.now() });

describe('maintenance reservations by scontrol over SSM on the simulated head node', () => {
  let t: SsmTestSite;
  afterEach(() => t.close());

  it('creates, lists, moves, makes again and deletes them, with names and times quoted', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names) });
    const reservations = new ScontrolReservations(t.transport, { clock: clock(t) });
    const now = t.site.simulator.clock.now();
    const at = (seconds: number) => now + seconds * 1000;
    const r1 = { name: reservationName('u1', names[0]!), nodes: [names[0]!], startsAt: at(60), endsAt: at(1260) };
    const r2 = { name: reservationName('u1', names[1]!), nodes: [names[1]!], startsAt: at(3600), endsAt: at(4800) };
    await reservations.apply({ put: [r1, r2], move: [], remove: [] });
    expect(t.site.simulator.headNode.commandLog.at(-1)).toBe(
      [
        'set -e',
        `'scontrol' 'create' 'reservation' 'ReservationName=${r1.name}' 'Nodes=${names[0]}' 'StartTime=now+60' 'EndTime=now+1260' 'Users=root' 'Flags=MAINT,IGNORE_JOBS'`,
        `'scontrol' 'create' 'reservation' 'ReservationName=${r2.name}' 'Nodes=${names[1]}' 'StartTime=now+3600' 'EndTime=now+4800' 'Users=root' 'Flags=MAINT,IGNORE_JOBS'`,
      ].join('\n'),
    );
    // Another session's reservation is not ours.
    await reservations.apply({ put: [{ ...r1, name: reservationName('u2', names[2]!), nodes: [names[2]!] }], move: [], remove: [] });
    expect(await reservations.list('rollout-u1-')).toEqual([r1, r2]);
    expect(t.site.simulator.workloadManager.listReservations().map((r) => r.flags)).toEqual([['MAINT', 'IGNORE_JOBS'], ['MAINT', 'IGNORE_JOBS'], ['MAINT', 'IGNORE_JOBS']]);

    t.advance(120);
    // r1 has begun: Slurm refuses to move its start, and the script stops there with the error.
    await expect(reservations.apply({ put: [], move: [{ ...r1, startsAt: at(2000), endsAt: at(3200) }], remove: [] })).rejects.toThrow(/Reservation already started/);
    await reservations.apply({ put: [{ ...r1, startsAt: at(2000), endsAt: at(3200) }], move: [{ ...r2, startsAt: at(7200), endsAt: at(8400) }], remove: [r1.name] });
    expect(await reservations.list('rollout-u1-')).toEqual([
      { ...r1, startsAt: at(2000), endsAt: at(3200) },
      { ...r2, startsAt: at(7200), endsAt: at(8400) },
    ]);
    await reservations.apply({ put: [], move: [], remove: [r1.name, r2.name] });
    expect(await reservations.list('rollout-u1-')).toEqual([]);
  });

  it('refuses a name that is not ours to quote before anything reaches the head node', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names) });
    const reservations = new ScontrolReservations(t.transport, { clock: clock(t) });
    const now = t.site.simulator.clock.now();
    await expect(reservations.apply({ put: [], move: [], remove: ["x'; scontrol delete ReservationName=all"] })).rejects.toThrow(SiteServiceError);
    await expect(reservations.apply({ put: [{ name: 'ok', nodes: ['bad node'], startsAt: now, endsAt: now + 1000 }], move: [], remove: [] })).rejects.toThrow(/node name/);
    expect(t.site.simulator.headNode.commandLog).toEqual([]);
  });

  it('keeps jobs whose time limit runs past its start off the reserved node, as slurmctld does (reservation.c)', async () => {
    t = await startSsmTestSite({
      nodes: nodesOf(names.slice(0, 2)),
      workload: { utilisation: 0.6, jobSeconds: { median: 3600, max: 6 * 3600 }, seed: 7, endFraction: { min: 0.2, max: 1 } },
    });
    const reservations = new ScontrolReservations(t.transport, { clock: clock(t) });
    const now = t.site.simulator.clock.now();
    await reservations.apply({ put: [{ name: 'rollout-u1-held', nodes: [names[0]!], startsAt: now + 60_000, endsAt: now + 12 * 3600_000 }], move: [], remove: [] });
    const busy = (node: string) => t.state().nodes[node]!.wlmState === 'ALLOCATED';
    let heldBusy = 0;
    let otherBusy = 0;
    for (let i = 0; i < 60; i++) {
      t.advance(600);
      if (busy(names[0]!)) heldBusy++;
      if (busy(names[1]!)) otherBusy++;
    }
    expect(heldBusy).toBe(0);
    expect(otherBusy).toBeGreaterThan(10);
  });
});
