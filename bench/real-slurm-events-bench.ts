import type { NodeRecord } from '../core/rolling-upgrade/session';
import { openRuntime } from '../local/open-runtime';
import { RealSlurmCluster, type RealSlurmRelease } from '../scripts/slurm/real-slurm';
import {
  clusterSiteProfile,
  clusterSpool,
  registrationsAfterReboot,
  spooledFiringFiles,
  triggersOfSession,
  writeClusterRelay,
} from '../scripts/slurm/site-events-on-cluster';
import { clientRpcs } from './real-slurm-bench';

/**
 * Issue 29 on a real Slurm, per release (`--only=real-slurm-events`): the rolling upgrade polled (every `poll` s)
 * against the same run woken by Slurm's triggers (the sh relay in the cluster's dir spooling each firing, the
 * runtime reading the spool; backstop `backstop` s), lock-step (step `step`) and the window (cap
 * `cap`), on two clusters of the same size side by side (one polled, one woken); then Slurm's own `scontrol
 * reboot ASAP nextstate=RESUME` of the same nodes in batches of the cap on the woken one's cluster. Figures:
 * slurmctld RPCs per node-upgrade (sdiag, the clients' only, as real-slurm-bench counts them), the time from a
 * node registering after its reboot (slurmctld's `Node X rebooted` line) to the run's next action on it (its
 * record leaving BOOTING), the makespan; the window's against Slurm's batches.
 */

export interface EventsBenchOptions {
  releases: readonly RealSlurmRelease[];
  nodes?: number;
  rebootDelaySeconds?: number;
  pollSeconds?: number;
  backstopSeconds?: number;
  cap?: number;
  /** Lock-step's step size. */
  step?: number;
}

export interface EventsRun {
  label: string;
  upgraded: number;
  failed: number;
  makespanSeconds: number;
  rpcs: number;
  rpcsByType: Record<string, number>;
  /** Per node rebooted: seconds from its registration after the reboot to its record leaving BOOTING. */
  backToAction: number[];
  siteEventCount: number;
  /** Triggers of the session still in `strigger --get` after it ended; firings left in the spool. */
  triggersLeft: number;
  spoolLeft: number;
}

const PHASES_AFTER_BOOT = ['BOOTED', 'CHECKING', 'DONE'] as const;

/** The record's first step after BOOTING (booted, checked or done), epoch ms. */
function leftBooting(record: NodeRecord): number | undefined {
  const times = PHASES_AFTER_BOOT.map((p) => record.phaseTimes?.[p]).filter((t): t is number => t !== undefined);
  return times.length > 0 ? Math.min(...times) : undefined;
}

/** One rolling upgrade of every node of `cluster` in-process through its site profile, polled or woken by its events. */
export async function measureEventsRun(
  cluster: RealSlurmCluster,
  options: { mode: 'lockstep' | 'window'; events: boolean; pollSeconds: number; backstopSeconds: number; cap: number; step: number },
): Promise<EventsRun> {
  await cluster.waitForNodes((nodes) => nodes.every((n) => n.base === 'IDLE' && n.flags.length === 0), 'every node idle', 120_000);
  const spool = clusterSpool(cluster);
  const profile = clusterSiteProfile(
    cluster,
    options.events ? { relay: writeClusterRelay(cluster), spool, backstopSeconds: options.backstopSeconds } : undefined,
  );
  const runtime = await openRuntime({ site: { kind: 'profile', profile, baseDir: cluster.dir } });
  try {
    const before = await cluster.sdiag();
    const started = Date.now();
    const run = await runtime.run('rollingUpgrade', {
      startingLabel: 'batch',
      upgradingLabel: 'upgrading',
      failedLabel: 'failed',
      upgradeStepSize: options.mode === 'lockstep' ? options.step : 1,
      upgradeTemplateId: 'img-2',
      workloadManagerType: 'slurm',
      pollIntervalSeconds: options.pollSeconds,
      ...(options.mode === 'window' ? { mode: 'window', maxUnavailable: options.cap } : {}),
    });
    const outcome = await run.outcome;
    if (outcome.status !== 'SUCCEEDED') throw new Error(`the run ended ${outcome.status}`);
    const makespanSeconds = (Date.now() - started) / 1000;
    const rpcs = await clientRpcs(cluster, before);
    const records = await runtime.store.listNodes(run.id);
    const session = await runtime.store.getSession(run.id);
    const registered = registrationsAfterReboot(cluster, started);
    const backToAction = records.flatMap((r) => {
      const at = registered.get(r.name);
      const next = leftBooting(r);
      return at !== undefined && next !== undefined ? [(next - at) / 1000] : [];
    });
    return {
      label: `${options.mode === 'lockstep' ? `lock-step, step ${options.step}` : `window, cap ${options.cap}`}, ${options.events ? `events (backstop ${options.backstopSeconds} s)` : `poll ${options.pollSeconds} s`}`,
      upgraded: records.filter((r) => r.status === 'UPGRADED').length,
      failed: records.filter((r) => r.status === 'FAILED').length,
      makespanSeconds,
      rpcs: rpcs.total,
      rpcsByType: rpcs.byType,
      backToAction,
      siteEventCount: session?.siteEventCount ?? 0,
      triggersLeft: await triggersOfSession(cluster, run.id),
      spoolLeft: spooledFiringFiles(spool).length,
    };
  } finally {
    await runtime.close();
  }
}

/**
 * Slurm's own answer at the same cap: `scontrol reboot ASAP nextstate=RESUME` of `cap` nodes, then the next `cap`
 * once they are back (registered, slurmctld's `Node X rebooted` line: idle again under nextstate=RESUME). The
 * wait reads slurmctld's log, not slurmctld: its RPCs are the reboots alone, and it sees a node back at once
 * (what a script polling sinfo would see up to a poll later).
 */
export async function measureSlurmBatches(cluster: RealSlurmCluster, cap: number): Promise<{ makespanSeconds: number; rpcs: number }> {
  await cluster.waitForNodes((nodes) => nodes.every((n) => n.base === 'IDLE' && n.flags.length === 0), 'every node idle', 120_000);
  const before = await cluster.sdiag();
  const started = Date.now();
  for (let i = 0; i < cluster.nodes.length; i += cap) {
    const batch = cluster.nodes.slice(i, i + cap);
    const asked = Date.now();
    await cluster.scontrol('reboot', 'ASAP', 'nextstate=RESUME', 'reason=bench', batch.join(','));
    const deadline = Date.now() + 120_000;
    while (!batch.every((n) => registrationsAfterReboot(cluster, asked).has(n))) {
      if (Date.now() > deadline) throw new Error(`Slurm did not reboot ${batch.join(',')} within 120 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const makespanSeconds = (Date.now() - started) / 1000;
  return { makespanSeconds, rpcs: (await clientRpcs(cluster, before)).total };
}

const median = (values: readonly number[]) => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

/** The figures of one release: the polled and woken runs side by side, and Slurm's batches. */
async function benchRelease(release: RealSlurmRelease, options: Required<Omit<EventsBenchOptions, 'releases'>>): Promise<string> {
  const started = Date.now();
  const start = () => RealSlurmCluster.start({ release, nodes: options.nodes, rebootDelaySeconds: options.rebootDelaySeconds, restd: false });
  const [polled, woken] = await Promise.all([start(), start()]);
  try {
    const runs = { pollSeconds: options.pollSeconds, backstopSeconds: options.backstopSeconds, cap: options.cap, step: options.step };
    const [[lockPoll, windowPoll], [lockEvents, windowEvents, slurm]] = await Promise.all([
      (async () => [
        await measureEventsRun(polled, { mode: 'lockstep', events: false, ...runs }),
        await measureEventsRun(polled, { mode: 'window', events: false, ...runs }),
      ])(),
      (async () =>
        [
          await measureEventsRun(woken, { mode: 'lockstep', events: true, ...runs }),
          await measureEventsRun(woken, { mode: 'window', events: true, ...runs }),
          await measureSlurmBatches(woken, options.cap),
        ] as const)(),
    ]);
    const lines = [
      `== real Slurm ${woken.version}: ${options.nodes} nodes, reboot ${options.rebootDelaySeconds} s, poll ${options.pollSeconds} s against events (backstop ${options.backstopSeconds} s), window cap ${options.cap}; ${((Date.now() - started) / 1000).toFixed(0)} s in all`,
      '',
      '| run | upgraded | slurmctld RPCs | per node-upgrade | registered → next action, median (max) | makespan | firings taken | triggers / firings left |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ];
    for (const r of [lockPoll!, lockEvents, windowPoll!, windowEvents]) {
      lines.push(
        `| ${r.label} | ${r.upgraded}${r.failed ? ` (+${r.failed} failed)` : ''} | ${r.rpcs} | ${(r.rpcs / Math.max(1, r.upgraded)).toFixed(2)} | ${median(r.backToAction).toFixed(1)} s (${Math.max(...r.backToAction).toFixed(1)} s) | ${r.makespanSeconds.toFixed(1)} s | ${r.siteEventCount} | ${r.triggersLeft} / ${r.spoolLeft} |`,
      );
    }
    lines.push(
      `| Slurm's \`scontrol reboot ASAP nextstate=RESUME\`, batches of ${options.cap} | ${options.nodes} | ${slurm.rpcs} | ${(slurm.rpcs / options.nodes).toFixed(2)} | | ${slurm.makespanSeconds.toFixed(1)} s | | |`,
      '',
      `window's makespan / Slurm's batches of ${options.cap}: polled ${(windowPoll!.makespanSeconds / slurm.makespanSeconds).toFixed(2)} x, events ${(windowEvents.makespanSeconds / slurm.makespanSeconds).toFixed(2)} x`,
      'RPCs by type:',
      ...[lockPoll!, lockEvents, windowPoll!, windowEvents].map(
        (r) =>
          `- ${r.label}: ${Object.entries(r.rpcsByType)
            .sort((a, b) => b[1] - a[1])
            .map(([t, n]) => `${t} ${n}`)
            .join(', ')}`,
      ),
    );
    return lines.join('\n');
  } finally {
    await Promise.all([polled.stop(), woken.stop()]);
  }
}

export async function benchRealSlurmEvents(options: EventsBenchOptions): Promise<string> {
  const resolved = {
    nodes: options.nodes ?? 8,
    step: options.step ?? 4,
    rebootDelaySeconds: options.rebootDelaySeconds ?? 3,
    pollSeconds: options.pollSeconds ?? 30,
    backstopSeconds: options.backstopSeconds ?? 60,
    cap: options.cap ?? 2,
  };
  const out: string[] = [];
  for (const release of options.releases) out.push(await benchRelease(release, resolved));
  return out.join('\n\n');
}
