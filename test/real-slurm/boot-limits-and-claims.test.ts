import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ScontrolWorkloadManager } from '../../adapters/site/commands/scontrol-workload-manager';
import { LocalTransport } from '../../adapters/site/commands/local-transport';
import { parseSiteMark } from '../../core/site/node-claims';
import { startCli, type CliResult } from '../support/cli';
import { describeRealSlurm } from '../support/describe-real-slurm';
import { RealSlurmCluster, type RealNode } from '../../scripts/slurm/real-slurm';
import { clusterUpgradeArgs, writeLocalSlurmProfile } from '../../scripts/slurm/upgrade-on-cluster';

/**
 * Issue 26, items 1 and 4, against a real Slurm, as an operator runs the product (`rollout upgrade
 * --site-config` over scontrol, slurm-reboot and the slurm inventory on the local transport):
 * - a window that boots one node at a time reboots each node (its boot limit is that node, never a
 *   group label of the same name), the busy one only once its job ended, and exits 0;
 * - an admin's drain whose reason begins with our word but names no run is kept byte for byte;
 * - (item 7) the blank the run writes over its own claim on a node in service, as Slurm 24.11 leaves
 *   it after RESUME, is taken by every release (`scontrol update NodeName=... Reason=' '`, no state).
 * The assertions hold on every release the harness runs (22.05, 24.11, 26.05): what Slurm shows at
 * the end is read, never our own record alone, and no claim of any run may be left in a reason.
 */
describeRealSlurm('window one node at a time, and an admin drain named like ours, against a real Slurm', (release) => {
  let cluster: RealSlurmCluster;
  let dir: string;
  let profile: string;

  beforeAll(async () => {
    cluster = await RealSlurmCluster.start({ release, nodes: 4, rebootDelaySeconds: 1, restd: false });
    dir = mkdtempSync(path.join(tmpdir(), 'rollout-real-slurm-limits-'));
    profile = writeLocalSlurmProfile(dir);
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const upgrade = (extra: string[]) => startCli(clusterUpgradeArgs(profile, extra), cluster.env);
  const report = (result: CliResult) => {
    try {
      return JSON.parse(result.stdout) as { state: string; completed: boolean; nodes: Record<string, { status: string; reason?: string }> };
    } catch {
      throw new Error(`rollout printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
  };
  const state = (n: RealNode) => [n.base, ...n.flags].join('+');
  const perNode = (entries: { node: string }[]) => {
    const counts: Record<string, number> = {};
    for (const e of entries) counts[e.node] = (counts[e.node] ?? 0) + 1;
    return counts;
  };
  /** Every node idle (a missed ping, `idle*`, let pass), none in our groups, no run's mark in any reason; `admin` as the admin left it. */
  const expectInServiceWithNoClaim = async (admin?: { node: string; reason: string }) => {
    const nodes = await cluster.waitForNodes(
      (all) => all.every((n) => !n.flags.includes('NOT_RESPONDING') && (n.base === 'IDLE' || n.name === admin?.node)),
      'every node idle and responding',
      60_000,
    );
    for (const node of nodes) {
      expect([node.name, parseSiteMark(node.reason)]).toEqual([node.name, undefined]);
      expect([node.name, node.features.filter((f) => f === 'upgrading' || f === 'failed')]).toEqual([node.name, []]);
      if (node.name === admin?.node) expect([node.name, state(node), node.reason]).toEqual([node.name, 'IDLE+DRAIN', admin.reason]);
      else expect([node.name, state(node)]).toEqual([node.name, 'IDLE']);
    }
  };

  test('window --max-unavailable 1 on 4 nodes, one busy: each node rebooted exactly once, the busy one after its job, exit 0', async () => {
    const before = cluster.rebootLog().length;
    const job = await cluster.submitJob('c02', { seconds: 25 });
    const run = upgrade(['--step-size', '4', '--mode', 'window', '--max-unavailable', '1']);
    await cluster.waitForJob(job, (s) => s === undefined, 'ended', 120_000);
    const jobEnded = await cluster.jobEndTime(job);
    expect(jobEnded).toBeDefined();
    const result = await run.done;
    const session = report(result);
    expect([result.code, session.state, session.completed]).toEqual([0, 'READY', true]);
    expect(Object.fromEntries(Object.entries(session.nodes).map(([name, n]) => [name, n.status]))).toEqual(
      Object.fromEntries(cluster.nodes.map((name) => [name, 'UPGRADED'])),
    );
    const reboots = cluster.rebootLog().slice(before);
    expect(perNode(reboots)).toEqual(Object.fromEntries(cluster.nodes.map((n) => [n, 1])));
    // Both in whole seconds: the RebootProgram ran for c02 once its job had ended.
    expect(reboots.find((r) => r.node === 'c02')!.at).toBeGreaterThanOrEqual(jobEnded!);
    await expectInServiceWithNoClaim();
  }, 240_000);

  test.each([
    ['lock-step', ['--step-size', '2']],
    ['window', ['--step-size', '4', '--mode', 'window', '--max-unavailable', '2']],
  ])(
    "an admin's drain `rolling-upgrade maintenance` is kept byte for byte (%s)",
    async (_mode, extra) => {
      const admin = { node: 'c03', reason: 'rolling-upgrade maintenance' };
      await cluster.scontrol('update', `NodeName=${admin.node}`, 'State=DRAIN', `Reason=${admin.reason}`);
      try {
        const before = cluster.rebootLog().length;
        const result = await upgrade(extra).done;
        const session = report(result);
        expect([result.code, session.state]).toEqual([0, 'READY']);
        expect(Object.values(session.nodes).map((n) => n.status)).toEqual(Array(4).fill('UPGRADED'));
        expect(perNode(cluster.rebootLog().slice(before))).toEqual(Object.fromEntries(cluster.nodes.map((n) => [n, 1])));
        await expectInServiceWithNoClaim(admin);
      } finally {
        // Lifted by hand for the next scenario (a run that wrongly lifted it leaves nothing to resume).
        await cluster.tryRun('scontrol', ['update', `NodeName=${admin.node}`, 'State=RESUME']);
      }
    },
    240_000,
  );

  test("clearReasons blanks a run's claim left on an idle node, and only on the nodes named", async () => {
    // As Slurm 24.11 without accounting leaves a node the run resumed: set by hand. 22.05 drops the reason
    // of a node in service at once (it reads empty before and after), so there only the command itself is checked.
    const claim = 'rolling-upgrade a1b2c3d4-0000-4000-8000-000000000001 : reboot issued';
    await cluster.scontrol('update', 'NodeName=c01,c02', `Reason=${claim}`);
    await cluster.scontrol('update', 'NodeName=c03', 'Reason=admin note');
    try {
      const before = new Map((await cluster.readNodes()).map((n) => [n.name, n]));
      // Base state only: a node may miss a ping on a loaded host (IDLE+NOT_RESPONDING for a few seconds).
      for (const name of ['c01', 'c02', 'c03']) expect([name, before.get(name)!.base]).toEqual([name, 'IDLE']);
      const wlm = new ScontrolWorkloadManager({ transport: new LocalTransport({ env: cluster.env }) });
      await wlm.clearReasons(['c01']);
      const after = new Map((await cluster.readNodes()).map((n) => [n.name, n]));
      expect([after.get('c01')!.base, after.get('c01')!.reason.trim()]).toEqual(['IDLE', '']);
      expect((await wlm.getNodes(['c01'])).get('c01')!.reason?.trim() || undefined).toBeUndefined();
      // The others as the release kept them, byte for byte.
      expect([after.get('c02')!.reason, after.get('c03')!.reason]).toEqual([before.get('c02')!.reason, before.get('c03')!.reason]);
    } finally {
      await cluster.tryRun('scontrol', ['update', 'NodeName=c01,c02,c03', 'Reason= ']);
    }
  }, 60_000);
});
