import { LocalTransport } from '../../adapters/site/commands/local-transport';
import { ScontrolReservations } from '../../adapters/site/commands/scontrol-reservations';
import { reservationName } from '../../core/rolling-upgrade/slot-plan';
import { describeRealSlurm, RealSlurmCluster } from '../support/real-slurm';

/**
 * reserveSlots' connector against slurmctld itself: a maintenance reservation keeps a job whose time
 * limit runs past its start off the node before the slot (reservation.c), and lets a shorter one run.
 */
describeRealSlurm('maintenance reservations on a real Slurm (scontrol-reservations.ts)', () => {
  let cluster: RealSlurmCluster;
  let reservations: ScontrolReservations;

  beforeAll(async () => {
    cluster = await RealSlurmCluster.start({ nodes: 2, restd: false, maxTimeMinutes: 30 });
    reservations = new ScontrolReservations(new LocalTransport({ env: cluster.env }));
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  test('a reservation from the slot on keeps a longer job off the node, a job that ends before it runs; list, move and delete', async () => {
    const now = Date.now();
    const held = { name: reservationName('u1', 'c01'), nodes: ['c01'], startsAt: now + 600_000, endsAt: now + 1_800_000 };
    await reservations.apply({ put: [held], move: [], remove: [] });
    const listed = await reservations.list('rollout-u1-');
    expect(listed.map((r) => r.name)).toEqual([held.name]);
    expect(listed[0]!.nodes).toEqual(['c01']);
    // Slurm keeps whole seconds; the adapter sends them relative to now.
    expect(Math.abs(listed[0]!.startsAt - held.startsAt)).toBeLessThanOrEqual(2000);
    expect(Math.abs(listed[0]!.endsAt - held.endsAt)).toBeLessThanOrEqual(2000);

    // 20 minutes of limit would run into the slot: the job waits, c01 stays idle.
    const long = await cluster.submitJob('c01', { seconds: 300, timeLimitMinutes: 20, wait: false });
    // 5 minutes end before it: that job runs at once on the same node.
    const short = await cluster.submitJob('c01', { seconds: 120, timeLimitMinutes: 5 });
    expect(await cluster.jobState(long)).toBe('PENDING');
    const { stdout: reason } = await cluster.run('squeue', ['-h', '-j', String(long), '-o', '%r']);
    expect(reason.trim()).toMatch(/Reserv|ReqNodeNotAvail/);
    await cluster.cancelJob(short);

    // A move of a reservation not yet started is an update; the listing follows it.
    await reservations.apply({ put: [], move: [{ ...held, startsAt: now + 900_000, endsAt: now + 2_100_000 }], remove: [] });
    expect(Math.abs((await reservations.list('rollout-u1-'))[0]!.startsAt - (now + 900_000))).toBeLessThanOrEqual(2000);

    // Once the reservation is gone, the long job may run there.
    await reservations.apply({ put: [], move: [], remove: [held.name] });
    expect(await reservations.list('rollout-u1-')).toEqual([]);
    await cluster.waitForJob(long, (state) => state === 'RUNNING', 'running once the reservation was deleted', 120_000);
    await cluster.cancelJob(long);
  }, 240_000);

  test('slurmctld refuses to move the start of a reservation that has begun, as the simulator does', async () => {
    const now = Date.now();
    const begun = { name: reservationName('u2', 'c02'), nodes: ['c02'], startsAt: now, endsAt: now + 600_000 };
    await reservations.apply({ put: [begun], move: [], remove: [] });
    await expect(reservations.apply({ put: [], move: [{ ...begun, startsAt: now + 300_000 }], remove: [] })).rejects.toThrow(/already started/i);
    await reservations.apply({ put: [], move: [], remove: [begun.name] });
  }, 60_000);
});
