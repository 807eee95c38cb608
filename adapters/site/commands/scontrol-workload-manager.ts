import { systemClock, type Clock } from '../../../core/clock';
import { SiteServiceError } from '../../../core/errors';
import { chunkHostlist, expandHostlist } from '../../../core/site/hostlist';
import { BLANK_REASON } from '../../../core/site/node-claims';
import { validNodeName, validNodeNames, validSiteReason } from '../../../core/site/names';
import type { CommandTransport } from '../../../ports/command-transport';
import type { SiteTriggers, WlmNode, WorkloadManager } from '../../../ports/site';
import { shellCommand } from './shell-quote';
import { checked, run as runScript, SlurmNodeReader, type ReadOptions } from './slurm-node-reader';

export interface ScontrolOptions {
  transport: CommandTransport;
  /** Path or name of scontrol on the head node; default `scontrol`. */
  scontrol?: string;
  /** Path or name of squeue on the head node; default `squeue`. */
  squeue?: string;
  /** Path or name of sinfo on the head node (the compact poll); default `sinfo`. */
  sinfo?: string;
  /** The site's node reader, shared with its other Slurm connectors (one version ask, one view of what changed); default its own. */
  reader?: SlurmNodeReader;
  /** The site's clock: squeue prints time left, turned into ends by it. Default the system clock. */
  clock?: Clock;
  /** Nodes per read command, fixed; default: sized from the output seen so far (see SlurmNodeReader). */
  showChunk?: number;
  /** The site's triggers (a profile's siteEvents: StriggerTriggers); none, every wait is a poll. */
  triggers?: SiteTriggers;
}

/** Runs a script; transport failures become SiteServiceError (retryable) naming the command. */
export const run = runScript;

/** Runs a script that must exit 0 (a non-zero exit is a SiteServiceError with the command and its stderr). */
export const runChecked = checked;

export { SLURM_COMMAND_TIMEOUT_SECONDS } from './slurm-node-reader';

/** Slurm through `scontrol` on a head node (SSM or local): the same node view as slurmrestd's. */
export class ScontrolWorkloadManager implements WorkloadManager {
  readonly triggers?: SiteTriggers;
  private readonly reader: SlurmNodeReader;
  private readonly scontrol: string;
  private readonly squeue: string;

  constructor(private readonly options: ScontrolOptions) {
    this.scontrol = options.scontrol ?? 'scontrol';
    this.squeue = options.squeue ?? 'squeue';
    if (options.triggers) this.triggers = options.triggers;
    this.reader =
      options.reader ??
      new SlurmNodeReader(options.transport, {
        scontrol: this.scontrol,
        ...(options.sinfo ? { sinfo: options.sinfo } : {}),
        ...(options.showChunk ? { fixedChunk: options.showChunk } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
      });
  }

  getNodes(names: readonly string[], options?: ReadOptions): Promise<Map<string, WlmNode>> {
    return this.reader.read('workload-manager', names, options);
  }

  /**
   * `squeue -h -t RUNNING -w <hostlist> -o '%N %L'` in chunks of 500 nodes (a line per job, well
   * inside SSM's output limit): each running job's nodes and time left, as ends from now.
   */
  async getJobEnds(names: readonly string[]): Promise<Map<string, number>> {
    const nodes = validNodeNames(names);
    const wanted = new Set(nodes);
    const ends = new Map<string, number>();
    for (const hostlist of chunkHostlist(nodes, 500)) {
      const script = shellCommand([this.squeue, '-h', '-t', 'RUNNING', '-w', hostlist, '-o', '%N %L']);
      const asked = (this.options.clock ?? systemClock).now();
      const result = await runChecked('workload-manager', this.options.transport, script);
      if (result.stdoutTruncated) throw new SiteServiceError('workload-manager', `${script}: the job listing exceeds the transport's output limit`);
      for (const line of result.stdout.split('\n')) {
        const [jobNodes, left] = line.trim().split(/\s+/);
        if (!jobNodes || !left) continue;
        const seconds = parseTimeLeft(left);
        if (seconds === undefined)
          throw new SiteServiceError('workload-manager', `${script} printed an unexpected time left: ${JSON.stringify(left.slice(0, 40))}`);
        const at = seconds === Infinity ? Infinity : asked + seconds * 1000;
        for (const node of expandHostlist(jobNodes)) if (wanted.has(node)) ends.set(node, Math.max(ends.get(node) ?? 0, at));
      }
    }
    return ends;
  }

  drain(name: string, reason: string): Promise<void> {
    return this.update([name], 'DRAIN', reason);
  }

  resume(name: string, reason?: string): Promise<void> {
    return this.update([name], 'RESUME', reason);
  }

  fail(name: string, reason: string): Promise<void> {
    return this.update([name], 'FAIL', reason);
  }

  drainNodes(names: readonly string[], reason: string): Promise<void> {
    return this.update(names, 'DRAIN', reason);
  }

  resumeNodes(names: readonly string[]): Promise<void> {
    return this.update(names, 'RESUME');
  }

  failNodes(names: readonly string[], reason: string): Promise<void> {
    return this.update(names, 'FAIL', reason);
  }

  /** `scontrol update NodeName=<hostlist> Reason=' '` (no state: update_node sets the reason alone; seen accepted on 22.05.8 and 24.11.5). */
  async clearReasons(names: readonly string[]): Promise<void> {
    const nodes = names.map((n, i) => validNodeName(n, `nodes[${i}]`));
    for (const hostlist of chunkHostlist(nodes, 500)) {
      this.reader.invalidate(expandHostlist(hostlist));
      await runChecked('workload-manager', this.options.transport, shellCommand([this.scontrol, 'update', `NodeName=${hostlist}`, `Reason=${BLANK_REASON}`]));
    }
  }

  /** One `scontrol update NodeName=<hostlist> State=...` for many nodes (chunks of 500 keep the command line short). */
  async update(names: readonly string[], state: 'DRAIN' | 'RESUME' | 'FAIL', reason?: string): Promise<void> {
    const nodes = names.map((n, i) => validNodeName(n, `nodes[${i}]`));
    const why = reason === undefined ? undefined : scontrolReason(validSiteReason(reason));
    for (const hostlist of chunkHostlist(nodes, 500)) {
      const argv = [this.scontrol, 'update', `NodeName=${hostlist}`, `State=${state}`, ...(why === undefined ? [] : [`Reason=${why}`])];
      this.reader.invalidate(expandHostlist(hostlist));
      await runChecked('workload-manager', this.options.transport, shellCommand(argv));
    }
  }
}

/**
 * The value of `Reason=` that makes scontrol send `reason` byte for byte: scontrol drops one `"` at
 * the start of the value and one at its end (src/scontrol/update_node.c, scontrol_update_node, the
 * same in 22.05, 24.11 and master), so a reason that begins or ends with `"` is wrapped in one more
 * pair. The shell word around it is single-quoted (shellCommand) on the local and SSM transports.
 */
export function scontrolReason(reason: string): string {
  return reason.startsWith('"') || reason.endsWith('"') ? `"${reason}"` : reason;
}

/** squeue's %L (`[days-]hours:minutes:seconds`, `minutes:seconds`, `UNLIMITED`, `NOT_SET`) in seconds; undefined if unreadable. */
export function parseTimeLeft(text: string): number | undefined {
  if (text === 'UNLIMITED' || text === 'NOT_SET' || text === 'INVALID') return Infinity;
  const match = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$/.exec(text);
  if (!match) return undefined;
  const [, days, hours, minutes, secs] = match;
  return Number(days ?? 0) * 86400 + Number(hours ?? 0) * 3600 + Number(minutes) * 60 + Number(secs);
}
