import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { LocalTransport } from '../adapters/site/commands/local-transport';
import { ScontrolWorkloadManager } from '../adapters/site/commands/scontrol-workload-manager';
import { SlurmInventory, type GroupMembership } from '../adapters/site/commands/slurm-inventory';
import { SlurmNodeReader } from '../adapters/site/commands/slurm-node-reader';
import { SlurmRebootBootService, type SlurmRebootSession } from '../adapters/site/commands/slurm-reboot-boot-service';
import { EmbeddedRuntime } from '../local/embedded-runtime';
import { randomStream } from '../simulator/seeded-random';
import { RealSlurmCluster } from '../scripts/slurm/real-slurm';
import type { SdiagCounts } from '../scripts/slurm/sdiag';

const execFileAsync = promisify(execFile);

/**
 * On a real Slurm cluster of 8 slurmds on this host (scripts/slurm/real-slurm.ts): slurmctld RPCs per
 * node-upgrade from `sdiag` (issue 21 goal 2), for lock-step and window, with the reads as they were
 * (every poll the full detail of every node: `before`) and as they are (a compact sinfo listing, the
 * detail only for what changed: `after`); then Slurm's own `scontrol reboot ASAP nextstate=RESUME` of
 * every node beside our window (cap 2, idle-first) on the same seeded real jobs (goal 7): makespan,
 * peak out of service sampled from sinfo every 0.5 s, RPCs, nodes rebooted twice.
 *
 * RPCs counted are the clients' (every message type but the daemons' own: slurmd registrations, batch
 * completions, epilogs, and sdiag's); the sinfo sampler runs as user `slurm` and its RPCs are taken out.
 */
const NODES = 8;
const DAEMON_TYPES = new Set([
  'MESSAGE_NODE_REGISTRATION_STATUS',
  'REQUEST_COMPLETE_BATCH_SCRIPT',
  'MESSAGE_EPILOG_COMPLETE',
  'REQUEST_COMPLETE_PROLOG',
  'REQUEST_STATS_INFO',
  'REQUEST_PING',
]);
const SAMPLER_USER = 'slurm';

interface Measured {
  label: string;
  makespanSeconds: number;
  upgraded: number;
  failed: number;
  rpcs: number;
  rpcsByType: Record<string, number>;
  peakOut: number;
  rebootedTwice: number;
}

export async function benchRealSlurm(options: { seed?: number; pollSeconds?: number } = {}): Promise<string> {
  const seed = options.seed ?? 7;
  const pollSeconds = options.pollSeconds ?? 5;
  const cluster = await RealSlurmCluster.start({ nodes: NODES, rebootDelaySeconds: 1, restd: false });
  try {
    const lines = [`== real Slurm ${cluster.version}, ${NODES} slurmds on this host, poll ${pollSeconds} s, seeded jobs (seed ${seed})`];
    const rows: Measured[] = [];
    for (const mode of ['lockstep', 'window'] as const) {
      for (const compact of [false, true]) {
        rows.push(await measureRollout(cluster, { mode, compact, seed, pollSeconds }));
      }
    }
    const slurm = await measureSlurmReboot(cluster, seed);
    const ours = rows.find((r) => r.label === 'window, after')!;
    lines.push(
      '',
      '| run | nodes upgraded | slurmctld RPCs | per node-upgrade | makespan | peak out of service | rebooted twice |',
      '| --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const r of [...rows, slurm]) {
      lines.push(
        `| ${r.label} | ${r.upgraded}${r.failed ? ` (+${r.failed} failed)` : ''} | ${r.rpcs} | ${(r.rpcs / Math.max(1, r.upgraded)).toFixed(2)} | ${r.makespanSeconds.toFixed(1)} s | ${r.peakOut} | ${r.rebootedTwice} |`,
      );
    }
    lines.push('', 'RPCs by type:');
    for (const r of [...rows, slurm])
      lines.push(
        `- ${r.label}: ${Object.entries(r.rpcsByType)
          .sort((a, b) => b[1] - a[1])
          .map(([t, n]) => `${t} ${n}`)
          .join(', ')}`,
      );
    lines.push('', `our window / Slurm's reboot ASAP makespan: ${(ours.makespanSeconds / slurm.makespanSeconds).toFixed(2)} x (cap 2 against none)`);
    return lines.join('\n');
  } finally {
    await cluster.stop();
  }
}

/** The same jobs for every run: 4 of the 8 nodes busy for 6 to 24 s. */
async function submitSeededJobs(cluster: RealSlurmCluster, seed: number): Promise<void> {
  const random = randomStream(seed, 'real-slurm-jobs');
  const busy = [...cluster.nodes].sort(() => random() - 0.5).slice(0, NODES / 2);
  await Promise.all(busy.map((node) => cluster.submitJob(node, { seconds: Math.round(6 + random() * 18) })));
}

export async function clientRpcs(cluster: RealSlurmCluster, before: SdiagCounts): Promise<{ total: number; byType: Record<string, number> }> {
  const after = await cluster.sdiag();
  const byType: Record<string, number> = {};
  for (const [type, count] of Object.entries(after.byType)) {
    const delta = count - (before.byType[type] ?? 0);
    if (delta > 0 && !DAEMON_TYPES.has(type)) byType[type] = delta;
  }
  const sampler = (after.byUser[SAMPLER_USER] ?? 0) - (before.byUser[SAMPLER_USER] ?? 0);
  const total = Object.values(byType).reduce((a, b) => a + b, 0) - sampler;
  return { total, byType };
}

/** `sinfo` as the sampler's own user, so that sdiag's count by user tells its RPCs apart. */
async function sinfoAsSampler(cluster: RealSlurmCluster): Promise<string> {
  const { stdout } = await execFileAsync(
    'runuser',
    ['-u', SAMPLER_USER, '--', 'env', `SLURM_CONF=${cluster.conf}`, 'sinfo', '-h', '-N', '-O', 'NodeList:0|,StateComplete:0|'],
    { env: cluster.env },
  );
  return stdout;
}

/** Samples sinfo (as the sampler's own user) every 0.5 s: the most nodes out of service at once. */
function sampleOutOfService(cluster: RealSlurmCluster): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const stdout = await sinfoAsSampler(cluster);
        const out = new Set(
          stdout
            .split('\n')
            .filter((l) => /drain|down|reboot|fail/.test(l.split('|')[1] ?? ''))
            .map((l) => l.split('|')[0]),
        );
        peak = Math.max(peak, out.size);
      } catch {
        // a missed sample
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return peak;
    },
  };
}

async function waitAllIdle(cluster: RealSlurmCluster): Promise<void> {
  await cluster.waitForNodes((nodes) => nodes.every((n) => n.base === 'IDLE' && n.flags.length === 0), 'every node idle', 120_000);
}

async function measureRollout(
  cluster: RealSlurmCluster,
  { mode, compact, seed, pollSeconds }: { mode: 'lockstep' | 'window'; compact: boolean; seed: number; pollSeconds: number },
): Promise<Measured> {
  await waitAllIdle(cluster);
  await submitSeededJobs(cluster, seed);
  const transport = new LocalTransport({ env: cluster.env });
  const reader = new SlurmNodeReader(transport, { compact });
  const runtime = await EmbeddedRuntime.start({
    connectedSite: {
      connect: async ({ connectorState }) => {
        const inventory = new SlurmInventory({ transport, memberships: connectorState.records<GroupMembership>('slurm-inventory') });
        return {
          site: {
            workloadManager: new ScontrolWorkloadManager({ transport, reader }),
            bootService: new SlurmRebootBootService({ transport, inventory, reader, sessions: connectorState.records<SlurmRebootSession>('slurm-reboot') }),
            inventory,
          },
        };
      },
    },
  });
  const rebootsBefore = cluster.rebootLog().length;
  const before = await cluster.sdiag();
  const sampler = sampleOutOfService(cluster);
  const started = performance.now();
  try {
    const run = await runtime.run('rollingUpgrade', {
      startingLabel: 'batch',
      upgradingLabel: 'upgrading',
      failedLabel: 'failed',
      upgradeStepSize: mode === 'lockstep' ? 4 : NODES,
      upgradeTemplateId: 'img-2',
      workloadManagerType: 'slurm',
      pollIntervalSeconds: pollSeconds,
      ...(mode === 'window' ? { mode: 'window', maxUnavailable: 2, order: 'idle-first' } : {}),
    });
    await run.outcome;
    const makespanSeconds = (performance.now() - started) / 1000;
    const peakOut = await sampler.stop();
    const rpcs = await clientRpcs(cluster, before);
    const nodes = await runtime.store.listNodes(run.id);
    const counts = perNode(cluster.rebootLog().slice(rebootsBefore));
    return {
      label: `${mode}${mode === 'lockstep' ? ' step 4' : ' cap 2 idle-first'}, ${compact ? 'after' : 'before'}`.replace('window cap 2 idle-first', 'window'),
      makespanSeconds,
      upgraded: nodes.filter((n) => n.status === 'UPGRADED').length,
      failed: nodes.filter((n) => n.status === 'FAILED').length,
      rpcs: rpcs.total,
      rpcsByType: rpcs.byType,
      peakOut,
      rebootedTwice: Object.values(counts).filter((n) => n > 1).length,
    };
  } finally {
    await sampler.stop();
    await runtime.close();
  }
}

/** Slurm's own answer: `scontrol reboot ASAP nextstate=RESUME` of every node, done once each rebooted and all are idle again. */
async function measureSlurmReboot(cluster: RealSlurmCluster, seed: number): Promise<Measured> {
  await waitAllIdle(cluster);
  await submitSeededJobs(cluster, seed);
  const rebootsBefore = cluster.rebootLog().length;
  const before = await cluster.sdiag();
  const sampler = sampleOutOfService(cluster);
  const started = performance.now();
  await cluster.scontrol('reboot', 'ASAP', 'nextstate=RESUME', cluster.nodes.join(','));
  const deadline = Date.now() + 180_000;
  for (;;) {
    const counts = perNode(cluster.rebootLog().slice(rebootsBefore));
    if (cluster.nodes.every((n) => (counts[n] ?? 0) >= 1)) {
      const nodes = parseStates(await sinfoAsSampler(cluster));
      if (nodes.every((s) => s === 'idle')) break;
    }
    if (Date.now() > deadline) throw new Error('Slurm did not reboot every node within 180 s');
    await new Promise((r) => setTimeout(r, 250));
  }
  const makespanSeconds = (performance.now() - started) / 1000;
  const peakOut = await sampler.stop();
  const rpcs = await clientRpcs(cluster, before);
  const counts = perNode(cluster.rebootLog().slice(rebootsBefore));
  return {
    label: "Slurm's scontrol reboot ASAP nextstate=RESUME",
    makespanSeconds,
    upgraded: NODES,
    failed: 0,
    rpcs: rpcs.total,
    rpcsByType: rpcs.byType,
    peakOut,
    rebootedTwice: Object.values(counts).filter((n) => n > 1).length,
  };
}

function parseStates(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('|')[1] ?? '');
}

function perNode(entries: readonly { node: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of entries) counts[e.node] = (counts[e.node] ?? 0) + 1;
  return counts;
}
