import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isUpgradeDrainReason } from '../../core/site/node-claims';
import { parseSiteDefinition } from '../../simulator';
import { startSiteSimulator, type RunningSiteSimulator } from '../../simulator/http-server';
import { SimClock } from '../../time/sim-clock';
import { startCli, type CliResult } from '../support/cli';
import { describeRealSlurm } from '../support/describe-real-slurm';
import { RealSlurmCluster } from '../../scripts/slurm/real-slurm';
import { clusterUpgradeArgs } from '../../scripts/slurm/upgrade-on-cluster';
import { LocalTransport } from '../../adapters/site/commands/local-transport';
import { SlurmInventory } from '../../adapters/site/commands/slurm-inventory';

/**
 * The rolling upgrade over the SSM transport against a real Slurm, as a process: the real AWS SDK
 * client goes to the simulator's SSM endpoint, whose agent stand-in (simulator/models/ssm-agent.ts)
 * runs the commands on this machine, so SendCommand and GetCommandInvocation carry real scontrol and
 * sinfo output. One cluster of 6 slurmds.
 */
describeRealSlurm('rollout upgrade over SSM against a real Slurm', (release) => {
  const HEAD_NODE = 'i-0123456789abcdef0';
  let cluster: RealSlurmCluster;
  let dir: string;
  let simulator: RunningSiteSimulator;

  beforeAll(async () => {
    cluster = await RealSlurmCluster.start({ release, nodes: 6, rebootDelaySeconds: 1, restd: false });
    dir = mkdtempSync(path.join(tmpdir(), 'rollout-real-slurm-ssm-'));
    // The simulator only for its SSM endpoint: its own site is a placeholder; HEAD_NODE's commands run here.
    simulator = await startSiteSimulator({
      site: parseSiteDefinition({ nodes: [{ name: 'placeholder', nid: 1 }] }),
      clock: new SimClock({ timeScale: 1 }),
      ssmAgent: { instanceIds: [HEAD_NODE], env: cluster.env },
    });
  }, 90_000);

  afterAll(async () => {
    await simulator?.close();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const json = <T>(result: CliResult): T => {
    try {
      return JSON.parse(result.stdout) as T;
    } catch {
      throw new Error(`rollout printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
  };
  const perNode = (entries: { node: string }[]) => {
    const counts: Record<string, number> = {};
    for (const e of entries) counts[e.node] = (counts[e.node] ?? 0) + 1;
    return counts;
  };
  const expectEveryNodeIdle = async () => {
    for (const node of await cluster.readNodes()) {
      expect([node.name, node.base, node.flags, isUpgradeDrainReason(node.reason)]).toEqual([node.name, 'IDLE', [], false]);
      expect([node.name, node.features.filter((f) => f === 'upgrading' || f === 'failed')]).toEqual([node.name, []]);
    }
  };

  test('a rolling upgrade over the SSM transport: SendCommand and GetCommandInvocation carry real scontrol output, each node rebooted once', async () => {
    const profile = path.join(dir, 'ssm-profile.yaml');
    writeFileSync(
      profile,
      [
        `transport: {type: ssm, instanceIds: [${HEAD_NODE}], region: us-east-1, endpoint: "${simulator.urls.ssm}"}`,
        'workloadManager: {type: scontrol}',
        'bootService: {type: slurm-reboot}',
        'inventory: {type: slurm}',
        '',
      ].join('\n'),
    );
    const before = cluster.rebootLog().length;
    const job = await cluster.submitJob('c03', { seconds: 10 });
    const env = { ...cluster.env, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'us-east-1' };
    const args = clusterUpgradeArgs(profile, ['--step-size', '3']);
    const result = await startCli(args, env).done;
    const session = json<{ state: string; completed: boolean; nodes: Record<string, { status: string }> }>(result);
    expect([result.code, session.state, session.completed]).toEqual([0, 'READY', true]);
    expect(Object.values(session.nodes).map((n) => n.status)).toEqual(Array(6).fill('UPGRADED'));
    expect(perNode(cluster.rebootLog().slice(before))).toEqual(Object.fromEntries(cluster.nodes.map((n) => [n, 1])));
    await cluster.waitForJob(job, (s) => s === undefined, 'ended');
    await expectEveryNodeIdle();

    // What went over SSM ran here, against this cluster: Slurm's own answers came back. The
    // connectors quote every word ('scontrol' '--version'): compare the words.
    const ran = simulator.ssmAgent!.commandLog;
    const words = (i: { commandLine: string }) => i.commandLine.replaceAll("'", '');
    expect(ran.length).toBeGreaterThan(0);
    expect(ran.every((i) => i.instanceId === HEAD_NODE)).toBe(true);
    expect(ran.find((i) => words(i).includes('scontrol --version'))?.stdout).toMatch(new RegExp(`^slurm(-wlm)? ${cluster.version.replaceAll('.', '\\.')}\n$`));
    const reboots = ran.filter((i) => /scontrol reboot /.test(words(i)));
    expect(reboots.length).toBeGreaterThan(0);
    expect(reboots.map((i) => [i.exitCode, i.stderr])).toEqual(reboots.map(() => [0, '']));
    expect(ran.some((i) => words(i).includes('sinfo') && /^c0[1-6]\|/m.test(i.stdout))).toBe(true);
    // 22.05: `scontrol -o show node` (Key=Value lines); from 23.02 `scontrol --json show node`.
    expect(ran.some((i) => words(i).includes('show node') && /NodeName=c0[1-6] |"name": ?"c0[1-6]"/.test(i.stdout))).toBe(true);
    // Every SendCommand was polled to its end with GetCommandInvocation.
    expect(ran.every((i) => i.polls > 0 && Number.isFinite(i.doneAt))).toBe(true);
  }, 240_000);

  test("the slurm inventory's getNodes reads the named nodes alone (sinfo --nodes=<hostlist>): as listed, an unknown name absent", async () => {
    const transport = new LocalTransport({ env: cluster.env });
    const listed = new Map((await new SlurmInventory({ transport }).listNodes()).map((n) => [n.name, n]));
    expect(listed.size).toBe(6);
    const [first, , third] = [...listed.keys()];
    const read = await new SlurmInventory({ transport }).getNodes([third!, first!, 'c99']);
    expect(read).toEqual(
      new Map([
        [third!, listed.get(third!)],
        [first!, listed.get(first!)],
      ]),
    );
  }, 60_000);
});
