import { LocalTransport } from '../../adapters/site/commands/local-transport';
import { ScontrolReservations } from '../../adapters/site/commands/scontrol-reservations';
import { describeRealSlurm } from '../support/describe-real-slurm';
import { RealSlurmCluster } from '../../scripts/slurm/real-slurm';

/**
 * reserveSlots' connector against slurmctld itself: a maintenance reservation keeps a job whose time
 * limit runs past its start off the node before the slot (reservation.c), and lets a shorter one run.
 */
describeRealSlurm('maintenance reservations on a real Slurm (scontrol-reservations.ts)', (release) => {
  let cluster: RealSlurmCluster;
  let reservations: ScontrolReservations;

  beforeAll(async () => {
    cluster = await RealSlurmCluster.start({ release, nodes: 2, restd: false, maxTimeMinutes: 30 });
    reservations = new ScontrolReservations(new LocalTransport({ env: cluster.env }));
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  test('a reservation from the slot on keeps a longer job off the node, a job that ends before it runs; list, node changes and delete', async () => {
    const now = Date.now();
    const held = { name: 'rollout-u1-1000', nodes: ['c01'], startsAt: now + 600_000, endsAt: now + 1_800_000 };
    await reservations.apply({ put: [held], update: [], remove: [] });
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

    // c01 leaves the reservation (it started, say) for c02: the long job may run on c01 now.
    await reservations.apply({ put: [], update: [{ ...held, nodes: ['c02'] }], remove: [] });
    expect((await reservations.list('rollout-u1-'))[0]!.nodes).toEqual(['c02']);
    await cluster.waitForJob(long, (state) => state === 'RUNNING', 'running once c01 left the reservation', 120_000);
    await cluster.cancelJob(long);
    await reservations.apply({ put: [], update: [], remove: [held.name] });
    expect(await reservations.list('rollout-u1-')).toEqual([]);
  }, 240_000);

  test('a reservation that has begun: its nodes change, its start does not (slurmctld refuses, as the simulator does)', async () => {
    const now = Date.now();
    const begun = { name: 'rollout-u2-1000', nodes: ['c02'], startsAt: now, endsAt: now + 600_000 };
    await reservations.apply({ put: [begun], update: [], remove: [] });
    await reservations.apply({ put: [], update: [{ ...begun, nodes: ['c01', 'c02'] }], remove: [] });
    expect((await reservations.list('rollout-u2-'))[0]!.nodes).toEqual(['c01', 'c02']);
    const moved = await cluster.tryRun('scontrol', ['update', `ReservationName=${begun.name}`, 'StartTime=now+300']);
    expect(moved.code).not.toBe(0);
    expect(moved.stdout + moved.stderr).toMatch(/already started/i);
    await reservations.apply({ put: [], update: [], remove: [begun.name] });
  }, 60_000);
});
