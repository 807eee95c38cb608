import { LocalTransport } from '../../adapters/site/commands/local-transport';
import { ScontrolWorkloadManager } from '../../adapters/site/commands/scontrol-workload-manager';
import { decideReturnToService } from '../../core/rolling-upgrade/step-decisions';
import { isUpgradeDrainReason } from '../../core/site/node-claims';
import { describeRealSlurm } from '../support/describe-real-slurm';
import { RealSlurmCluster, shortSlurmdTimeout } from '../../scripts/slurm/real-slurm';
import { node, OUR_DRAIN, progress, session } from '../support/upgrade-sessions';

/**
 * A reboot through another service (BOS) that outlasts SlurmdTimeout: Slurm sets the node DOWN and
 * appends ` : Not responding` to our reason; under ReturnToService 0 or 1 it stays DOWN when slurmd
 * registers again, under 2 it comes back IDLE+DRAIN. Whatever the setting, the run recognises its
 * drain by its prefix and run id, counts the node back once slurmd answers after the boot, and resumes it.
 */
describeRealSlurm('back after a reboot longer than SlurmdTimeout, under each ReturnToService (real Slurm)', (release) => {
  const clusters = new Map<number, RealSlurmCluster>();

  beforeAll(async () => {
    await Promise.all(
      [0, 1, 2].map(async (rts) =>
        clusters.set(
          rts,
          await RealSlurmCluster.start({ release, nodes: 2, restd: false, slurmdTimeout: shortSlurmdTimeout(release), returnToService: rts as 0 | 1 | 2 }),
        ),
      ),
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all([...clusters.values()].map((c) => c.stop()));
  }, 60_000);

  const scenario = async (rts: 0 | 1 | 2) => {
    const cluster = clusters.get(rts)!;
    const wlm = new ScontrolWorkloadManager({ transport: new LocalTransport({ env: cluster.env }) });
    // The session's own claim, as the run drains: its prefix and its run id.
    await wlm.drainNodes(['c01'], OUR_DRAIN);
    const requestedAt = Date.now() - 1000;
    // The boot service takes the node down longer than SlurmdTimeout, then it boots.
    await cluster.stopSlurmd('c01');
    const down = await cluster.waitForNode('c01', (n) => n.base === 'DOWN' && n.flags.includes('NOT_RESPONDING'), 'DOWN, not responding', 60_000);
    // 22.05 keeps a reason that is there (node_mgr.c set_node_down_ptr); later releases append " : Not responding": ours either way.
    expect([`${OUR_DRAIN} : Not responding`, OUR_DRAIN]).toContain(down.reason);
    expect(isUpgradeDrainReason(down.reason)).toBe(true);
    await cluster.startSlurmd('c01', { booted: true });
    const registered = await cluster.waitForNode('c01', (n) => !n.flags.includes('NOT_RESPONDING'), 'answering again', 60_000);
    // ReturnToService 0 and 1 keep it DOWN (1 only returns a node whose reason is exactly "Not responding"); 2 returns it, still drained.
    expect([registered.base, registered.flags.includes('DRAIN')]).toEqual(rts === 2 ? ['IDLE', true] : ['DOWN', true]);

    const observed = await wlm.getNodes(['c01'], { bootedSince: new Map([['c01', requestedAt]]) });
    const s = session({ nodeCount: 1, stepCount: 1 });
    const decision = decideReturnToService({
      session: s,
      progress: progress({ stage: 'WLM_WAITING', bootRequestedAt: requestedAt, bootFinishedAt: requestedAt }),
      nodes: [node('c01', 0)],
      observed: { wlm: observed },
      now: Date.now(),
    });
    expect(decision.actions.filter((a) => a.type === 'resume' || a.type === 'recordNodes')).toEqual([
      { type: 'resume', nodes: ['c01'] },
      { type: 'recordNodes', records: [{ name: 'c01', index: 0, status: 'UPGRADED', phase: 'DONE' }] },
    ]);
    await wlm.resumeNodes(['c01']);
    const back = await cluster.waitForNode('c01', (n) => n.base === 'IDLE' && !n.flags.includes('NOT_RESPONDING'), 'idle, in service', 60_000);
    expect(back.flags).toEqual([]);
  };

  // The three clusters at once: each waits out its SlurmdTimeout side by side.
  it('ReturnToService 0, 1 and 2: our drain recognised (with or without " : Not responding"), the node resumed once slurmd answers', async () => {
    await Promise.all([0, 1, 2].map((rts) => scenario(rts as 0 | 1 | 2)));
  }, 120_000);
});
