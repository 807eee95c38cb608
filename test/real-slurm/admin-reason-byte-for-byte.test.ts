import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCli } from '../support/cli';
import { describeRealSlurm } from '../support/describe-real-slurm';
import { RealSlurmCluster, type RealNode } from '../../scripts/slurm/real-slurm';
import { clusterUpgradeArgs, writeLocalSlurmProfile } from '../../scripts/slurm/upgrade-on-cluster';

/**
 * Issue 26, invariant "an admin's reason is left byte for byte", against a real Slurm, as an operator
 * runs the product (`rollout upgrade --site-config` over scontrol, slurm-reboot and the slurm
 * inventory on the local transport, so every command goes through /bin/sh -c). Two nodes an admin
 * drained with reasons the strict user-input pattern refuses: `#`, quotes, `$()`, backticks, `;`,
 * non-ASCII, and one ending in `"` (scontrol's update_node.c drops one trailing quote). Slurm appends
 * ` : reboot issued` when it reboots them; the run gives each back exactly, and runs nothing: the
 * `$(touch ...)` and backticks in the reasons would create a marker file if a shell ever expanded them.
 */
describeRealSlurm("an admin's drain reason with quotes, $(), backticks and non-ASCII, through an upgrade, against a real Slurm", (release) => {
  let cluster: RealSlurmCluster;
  let dir: string;
  let profile: string;
  let marker: string;

  beforeAll(async () => {
    cluster = await RealSlurmCluster.start({ release, nodes: 4, rebootDelaySeconds: 1, restd: false });
    dir = mkdtempSync(path.join(tmpdir(), 'rollout-real-slurm-reasons-'));
    marker = path.join(dir, 'expanded');
    profile = writeLocalSlurmProfile(dir);
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const state = (n: RealNode) => [n.base, ...n.flags].join('+');

  test.each([
    ['lock-step', ['--step-size', '2']],
    ['window', ['--step-size', '4', '--mode', 'window', '--max-unavailable', '2']],
  ])(
    'each node rebooted once; the admin-drained ones end drained with exactly the reason the admin set (%s)',
    async (_mode, extra) => {
      const admins = [
        { node: 'c02', reason: `ticket #4521 "disk" é; $(touch ${marker}) \`touch ${marker}\` it's` },
        { node: 'c03', reason: 'see "RMA 77"' },
      ];
      // As an admin types it (argv, no shell): scontrol drops one leading and one trailing `"`, so the second is wrapped once more.
      await cluster.scontrol('update', `NodeName=${admins[0]!.node}`, 'State=DRAIN', `Reason=${admins[0]!.reason}`);
      await cluster.scontrol('update', `NodeName=${admins[1]!.node}`, 'State=DRAIN', `Reason="${admins[1]!.reason}"`);
      try {
        const set = new Map((await cluster.readNodes()).map((n) => [n.name, n]));
        for (const a of admins) expect([a.node, set.get(a.node)!.reason]).toEqual([a.node, a.reason]);
        const before = cluster.rebootLog().length;
        const result = await startCli(clusterUpgradeArgs(profile, extra), cluster.env).done;
        const session = JSON.parse(result.stdout) as { state: string; nodes: Record<string, { status: string }> };
        // A node that did not end UPGRADED is shown with its record and what Slurm and the stand-in logged for it.
        const notUpgraded = Object.entries(session.nodes).filter(([, n]) => n.status !== 'UPGRADED');
        const why = notUpgraded.map(([name, n]) => `${JSON.stringify({ [name]: n })}\n${cluster.nodeDiagnostics(name)}`).join('\n');
        expect([result.code, session.state, why]).toEqual([0, 'READY', '']);
        expect(Object.values(session.nodes).map((n) => n.status)).toEqual(Array(4).fill('UPGRADED'));
        const reboots: Record<string, number> = {};
        for (const r of cluster.rebootLog().slice(before)) reboots[r.node] = (reboots[r.node] ?? 0) + 1;
        expect(reboots).toEqual(Object.fromEntries(cluster.nodes.map((n) => [n, 1])));
        const nodes = await cluster.waitForNodes(
          (all) => all.every((n) => !n.flags.includes('NOT_RESPONDING') && (n.base === 'IDLE' || admins.some((a) => a.node === n.name))),
          'every node idle and responding',
          60_000,
        );
        for (const node of nodes) {
          const admin = admins.find((a) => a.node === node.name);
          if (admin) expect([node.name, state(node), node.reason]).toEqual([node.name, 'IDLE+DRAIN', admin.reason]);
          else expect([node.name, state(node)]).toEqual([node.name, 'IDLE']);
        }
        expect(existsSync(marker)).toBe(false);
      } finally {
        for (const a of admins) await cluster.tryRun('scontrol', ['update', `NodeName=${a.node}`, 'State=RESUME']);
      }
    },
    240_000,
  );
});
