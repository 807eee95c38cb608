import { ScontrolReservations } from '../../../../adapters/site/commands/scontrol-reservations';
import { SiteServiceError } from '../../../../core/errors';
import { nodeNames, nodesOf } from '../../../support/simulator';
import { startSsmTestSite, type SsmTestSite } from '../../../support/ssm-site';

const names = nodeNames(4);
const clock = (t: SsmTestSite) => ({ now: () => t.site.simulator.clock.now() });

describe('maintenance reservations by scontrol over SSM on the simulated head node', () => {
  let t: SsmTestSite;
  afterEach(() => t.close());

  it('creates, lists, changes the nodes of and deletes them, with names and times quoted', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names) });
    const reservations = new ScontrolReservations(t.transport, { clock: clock(t) });
    const now = t.site.simulator.clock.now();
    const at = (seconds: number) => now + seconds * 1000;
    const r1 = { name: 'rollout-u1-1000', nodes: [names[0]!, names[1]!], startsAt: at(60), endsAt: at(1260) };
    const r2 = { name: 'rollout-u1-4600', nodes: [names[2]!], startsAt: at(3600), endsAt: at(4800) };
    await reservations.apply({ put: [r1, r2], update: [], remove: [] });
    expect(t.site.simulator.headNode.commandLog.at(-1)).toBe(
      [
        'set -e',
        `'scontrol' 'create' 'reservation' 'ReservationName=${r1.name}' 'Nodes=x3000c0s[1-2]b0n0' 'StartTime=now+60' 'EndTime=now+1260' 'Users=root' 'Flags=MAINT,IGNORE_JOBS'`,
        `'scontrol' 'create' 'reservation' 'ReservationName=${r2.name}' 'Nodes=${names[2]}' 'StartTime=now+3600' 'EndTime=now+4800' 'Users=root' 'Flags=MAINT,IGNORE_JOBS'`,
      ].join('\n'),
    );
    // Another session's reservation is not ours.
    await reservations.apply({ put: [{ ...r1, name: 'rollout-u2-1000', nodes: [names[3]!] }], update: [], remove: [] });
    expect(await reservations.list('rollout-u1-')).toEqual([r1, r2]);
    expect(t.site.simulator.workloadManager.listReservations().map((r) => r.flags)).toEqual([
      ['MAINT', 'IGNORE_JOBS'],
      ['MAINT', 'IGNORE_JOBS'],
      ['MAINT', 'IGNORE_JOBS'],
    ]);

    t.advance(120);
    // r1 has begun: Slurm refuses to move its start (test/real-slurm/reservations.test.ts), and so does the simulator...
    const moved = await t.transport.run(`'scontrol' 'update' 'ReservationName=${r1.name}' 'StartTime=now+300'`);
    expect([moved.exitCode, moved.stderr]).toEqual([1, 'Error updating the reservation: Reservation already started\n']);
    // ...while its nodes still change (a node leaves it when it starts).
    await reservations.apply({
      put: [],
      update: [
        { ...r1, nodes: [names[1]!] },
        { ...r2, nodes: [names[2]!, names[0]!] },
      ],
      remove: [],
    });
    expect(t.site.simulator.headNode.commandLog.at(-1)).toContain(`'scontrol' 'update' 'ReservationName=${r1.name}' 'Nodes=${names[1]}'`);
    expect(await reservations.list('rollout-u1-')).toEqual([
      { ...r1, nodes: [names[1]!] },
      { ...r2, nodes: [names[0]!, names[2]!] },
    ]);
    await reservations.apply({ put: [], update: [], remove: [r1.name, r2.name] });
    expect(await reservations.list('rollout-u1-')).toEqual([]);
    // A delete of one already gone fails the script, and says so.
    await expect(reservations.apply({ put: [], update: [], remove: [r1.name] })).rejects.toThrow(SiteServiceError);
  });

  it('refuses a name that is not ours to quote before anything reaches the head node', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names) });
    const reservations = new ScontrolReservations(t.transport, { clock: clock(t) });
    const now = t.site.simulator.clock.now();
    await expect(reservations.apply({ put: [], update: [], remove: ["x'; scontrol delete ReservationName=all"] })).rejects.toThrow(SiteServiceError);
    await expect(reservations.apply({ put: [{ name: 'ok', nodes: ['bad node'], startsAt: now, endsAt: now + 1000 }], update: [], remove: [] })).rejects.toThrow(
      /node name/,
    );
    expect(t.site.simulator.headNode.commandLog).toEqual([]);
  });

  it('refuses a listing the transport cut short, rather than take held reservations for missing', async () => {
    const many = nodeNames(200);
    t = await startSsmTestSite({ nodes: nodesOf(many) });
    const reservations = new ScontrolReservations(t.transport, { clock: clock(t) });
    const now = t.site.simulator.clock.now();
    // One reservation per node, ~330 characters each: past SSM's 24,000.
    await reservations.apply({
      put: many.map((n, i) => ({ name: `rollout-u1-${i}`, nodes: [n], startsAt: now + 60_000, endsAt: now + 600_000 })),
      update: [],
      remove: [],
    });
    await expect(reservations.list('rollout-u1-')).rejects.toThrow(/more than the transport returns/);
  });

  it('keeps jobs whose time limit runs past its start off the reserved node, as slurmctld does (reservation.c)', async () => {
    t = await startSsmTestSite({
      nodes: nodesOf(names.slice(0, 2)),
      workload: { utilisation: 0.6, jobSeconds: { median: 3600, max: 6 * 3600 }, seed: 7, endFraction: { min: 0.2, max: 1 } },
    });
    const reservations = new ScontrolReservations(t.transport, { clock: clock(t) });
    const now = t.site.simulator.clock.now();
    await reservations.apply({
      put: [{ name: 'rollout-u1-held', nodes: [names[0]!], startsAt: now + 60_000, endsAt: now + 12 * 3600_000 }],
      update: [],
      remove: [],
    });
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
