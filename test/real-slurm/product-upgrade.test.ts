import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isUpgradeDrainReason } from '../../core/site/node-claims';
import { startCli, type CliResult } from '../support/cli';
import { describeRealSlurm } from '../support/describe-real-slurm';
import { RealSlurmCluster, type RealNode } from '../../scripts/slurm/real-slurm';
import { clusterUpgradeArgs, writeLocalSlurmProfile } from '../../scripts/slurm/upgrade-on-cluster';

/**
 * The whole product against a real Slurm, as an operator runs it: `rollout upgrade --site-config`
 * processes over scontrol, slurm-reboot and the slurm inventory on the local transport, one
 * cluster of 8 slurmds whose RebootProgram stand-in logs every reboot. Scenarios run one after the
 * other on the same cluster, each leaving it as it found it.
 */
describeRealSlurm('rollout against a real Slurm (scontrol, slurm-reboot, slurm inventory)', (release) => {
  let cluster: RealSlurmCluster;
  let dir: string;
  let profile: string;
  const ADMIN_REASON = 'admin: bad dimm';

  beforeAll(async () => {
    cluster = await RealSlurmCluster.start({ release, nodes: 8, rebootDelaySeconds: 1, restd: false });
    dir = mkdtempSync(path.join(tmpdir(), 'rollout-real-slurm-'));
    profile = writeLocalSlurmProfile(dir);
    // An admin's drain, from before any run: every run keeps it, and its reason.
    await cluster.scontrol('update', 'NodeName=c05', 'State=DRAIN', `Reason=${ADMIN_REASON}`);
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const rollout = (args: string[]) => startCli(args, cluster.env);
  const report = (result: CliResult) => {
    try {
      return JSON.parse(result.stdout) as { state: string; completed: boolean; nodes: Record<string, { status: string; reason?: string }> };
    } catch {
      throw new Error(`rollout printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
  };
  const state = (n: RealNode) => [n.base, ...n.flags].join('+');
  const rebootsSince = (count: number) => cluster.rebootLog().slice(count);
  const perNode = (entries: { node: string }[]) => {
    const counts: Record<string, number> = {};
    for (const e of entries) counts[e.node] = (counts[e.node] ?? 0) + 1;
    return counts;
  };
  /** At the end of every run: every node in service with no reason of ours, c05 as the admin left it, no node in our groups. */
  /** A node's slurmd may miss a ping on a loaded host (IDLE+NOT_RESPONDING for a few seconds, unrelated to the run): let that pass first. */
  const settleNotResponding = async () => {
    const settle = Date.now() + 30_000;
    while ((await cluster.readNodes()).some((n) => n.flags.includes('NOT_RESPONDING')) && Date.now() < settle) await new Promise((r) => setTimeout(r, 500));
  };
  const expectClusterAsBefore = async () => {
    await settleNotResponding();
    const nodes = await cluster.readNodes();
    for (const node of nodes) {
      expect([node.name, isUpgradeDrainReason(node.reason) && (node.flags.includes('DRAIN') || node.base === 'DOWN')]).toEqual([node.name, false]);
      expect([node.name, node.features.filter((f) => f === 'upgrading' || f === 'failed')]).toEqual([node.name, []]);
      if (node.name === 'c05') expect([state(node), node.reason]).toEqual(['IDLE+DRAIN', ADMIN_REASON]);
      else expect([node.name, state(node)]).toEqual([node.name, 'IDLE']);
    }
  };

  test('lock-step, step 4, one node busy on a real job: each node rebooted once, the busy one only after its job, an admin drain kept', async () => {
    const before = cluster.rebootLog().length;
    const job = await cluster.submitJob('c02', { seconds: 12 });
    const run = rollout(clusterUpgradeArgs(profile, ['--step-size', '4']));
    await cluster.waitForJob(job, (s) => s === undefined, 'ended', 60_000);
    // Slurm's own EndTime: when this test saw the job gone can be seconds later on a loaded host, after the reboot.
    const jobEnded = await cluster.jobEndTime(job);
    expect(jobEnded).toBeDefined();
    const result = await run.done;
    const session = report(result);
    expect([result.code, session.state, session.completed]).toEqual([0, 'READY', true]);
    expect(Object.values(session.nodes).map((n) => n.status)).toEqual(Array(8).fill('UPGRADED'));
    const reboots = rebootsSince(before);
    expect(perNode(reboots)).toEqual(Object.fromEntries(cluster.nodes.map((n) => [n, 1])));
    // Both in whole seconds: the RebootProgram ran once the job had ended.
    expect(reboots.find((r) => r.node === 'c02')!.at).toBeGreaterThanOrEqual(jobEnded!);
    await expectClusterAsBefore();
  }, 180_000);

  test('window, --max-unavailable 2 --order idle-first: never more than 2 of our nodes out of service as sinfo shows them', async () => {
    const before = cluster.rebootLog().length;
    const job = await cluster.submitJob('c01', { seconds: 8 });
    const run = rollout(clusterUpgradeArgs(profile, ['--step-size', '8', '--mode', 'window', '--max-unavailable', '2', '--order', 'idle-first']));
    let peak = 0;
    let sampling = true;
    const samples = (async () => {
      while (sampling) {
        const listing = await cluster.tryRun('sinfo', ['-h', '-N', '-O', 'NodeList:0|,StateComplete:0|,Reason:0']);
        // Out of service: drained, down or rebooting; c05 was out before the run (the admin's).
        const out = listing.stdout.split('\n').filter((line) => line && !line.startsWith('c05|') && /drain|down|reboot|fail/.test(line.split('|')[1] ?? ''));
        peak = Math.max(peak, out.length);
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    const result = await run.done;
    sampling = false;
    await samples;
    await cluster.waitForJob(job, (s) => s === undefined, 'ended');
    const session = report(result);
    expect([result.code, session.state]).toEqual([0, 'READY']);
    expect(Object.values(session.nodes).map((n) => n.status)).toEqual(Array(8).fill('UPGRADED'));
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(2);
    expect(perNode(rebootsSince(before))).toEqual(Object.fromEntries(cluster.nodes.map((n) => [n, 1])));
    await expectClusterAsBefore();
  }, 180_000);

  test('a node that never comes back ends FAILED with its reason, in the failed group; the others UPGRADED', async () => {
    await cluster.setRebootBehaviour('c08', 'never');
    // The seven that come back must do so within --boot-timeout: 30 s leaves a loaded host room (each takes 4-6 s unloaded).
    const result = await rollout(clusterUpgradeArgs(profile, ['--step-size', '8', '--boot-timeout', '30'])).done;
    const session = report(result);
    expect(result.code).toBe(0);
    expect(session.nodes.c08).toMatchObject({ status: 'FAILED', reason: 'upgrading-time-out-booting', phase: 'failed' });
    expect(
      Object.entries(session.nodes)
        .filter(([name]) => name !== 'c08')
        .map(([, n]) => n.status),
    ).toEqual(Array(7).fill('UPGRADED'));
    const c08 = await cluster.node('c08');
    expect(c08.features).toContain('failed');
    expect(c08.flags).toContain('FAIL');
    expect(c08.reason.startsWith('upgrading-time-out-booting')).toBe(true);
    // Put it back for the next scenario: its slurmd up, the failure lifted, out of the failed group.
    await cluster.setRebootBehaviour('c08', 'normal');
    await cluster.startSlurmd('c08', { booted: true });
    await cluster.scontrol('update', 'NodeName=c08', 'State=RESUME');
    await cluster.scontrol('update', 'NodeName=c08', 'AvailableFeatures=', 'ActiveFeatures=');
    await cluster.waitForNode('c08', (n) => n.base === 'IDLE' && n.flags.length === 0, 'back idle', 60_000);
  }, 180_000);

  test('Ctrl-C mid-run: the session stops, and no node is left drained by us', async () => {
    const job = await cluster.submitJob('c01', { seconds: 120 });
    const run = rollout(clusterUpgradeArgs(profile, ['--step-size', '2']));
    try {
      await cluster.waitForNode('c01', (n) => n.flags.includes('DRAIN') && isUpgradeDrainReason(n.reason), 'drained by the run', 90_000);
      run.child.kill('SIGINT');
      const result = await run.done;
      expect(result.code).toBe(1);
      // The first Ctrl-C stops the run (issue 20): what is in flight finishes, the drain not yet followed by a reboot is lifted.
      expect(result.stderr).toContain('stopping upgrade');
      const session = report(result);
      expect(session.state).toBe('STOPPED');
    } finally {
      await cluster.cancelJob(job);
    }
    // The cancelled job's epilog runs first (IDLE+COMPLETING, seen on 24.11 under load).
    await cluster.waitForNode('c01', (n) => n.base === 'IDLE' && !n.flags.includes('COMPLETING'), 'idle after its job and its epilog', 30_000);
    await expectClusterAsBefore();
  }, 180_000);

  test('kill -9 mid-run, then `rollout session resume`: each node rebooted exactly once, its recorded status what Slurm shows', async () => {
    const dataDir = path.join(dir, 'data');
    const before = cluster.rebootLog().length;
    const run = rollout([...clusterUpgradeArgs(profile, ['--step-size', '4']), '--data-dir', dataDir]);
    // Killed while the first step's nodes reboot.
    const deadline = Date.now() + 90_000;
    while (rebootsSince(before).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(rebootsSince(before).length).toBeGreaterThan(0);
    run.child.kill('SIGKILL');
    await run.done;
    const list = await rollout(['session', 'list', '--data-dir', dataDir, '--json']).done;
    const sessions = JSON.parse(list.stdout) as { id?: string; upgradeId?: string }[];
    const id = sessions[0]!.upgradeId ?? sessions[0]!.id!;
    const resumed = await rollout(['session', 'resume', id, '--data-dir', dataDir, '--site-config', profile, '--json']).done;
    const session = report(resumed);
    expect([resumed.code, session.state]).toEqual([0, 'READY']);
    expect(perNode(rebootsSince(before))).toEqual(Object.fromEntries(cluster.nodes.map((n) => [n, 1])));
    await settleNotResponding();
    const nodes = await cluster.readNodes();
    for (const node of nodes)
      expect([node.name, session.nodes[node.name]?.status, node.name === 'c05' || state(node) === 'IDLE']).toEqual([node.name, 'UPGRADED', true]);
    await expectClusterAsBefore();
  }, 240_000);
});
