import { systemClock, type Clock } from '../../../core/clock';
import { SiteServiceError, describeError } from '../../../core/errors';
import { chunkHostlist, compressHostlist, expandHostlist } from '../../../core/site/hostlist';
import { validNodeName, validNodeNames, validReason } from '../../../core/site/names';
import type { CommandTransport } from '../../../ports/command-transport';
import type { WlmNode, WorkloadManager } from '../../../ports/site';
import { shellCommand } from './shell-quote';
import { slurmJsonNodes, toWlmNode, type SlurmJsonNode } from '../slurm-json';

type Service = SiteServiceError['service'];

export interface ScontrolOptions {
  transport: CommandTransport;
  /** Path or name of scontrol on the head node; default `scontrol`. */
  scontrol?: string;
  /** Path or name of squeue on the head node; default `squeue`. */
  squeue?: string;
  /** The site's clock: squeue prints time left, turned into ends by it. Default the system clock. */
  clock?: Clock;
  /** Nodes per `scontrol --json show node` call, fixed; default: sized from the output seen so far (see SlurmNodeReader). */
  showChunk?: number;
}

/** Output characters a `show node` call plans for: SSM keeps 24,000; the rest is margin for longer nodes. */
const OUTPUT_BUDGET = 20_000;
/** Before any answer was seen: a node as Slurm 24's `scontrol --json` prints it (pretty, ~60 fields), with its share of the header. */
const FIRST_CHARS_PER_NODE = 3_000;
const MAX_CHUNK = 500;

/**
 * Reads Slurm node JSON in hostlist chunks sized to fit the transport's output: `scontrol --json`
 * prints each node pretty, with every field, about 3 KB, so SSM's 24,000 characters hold only a few.
 * The chunk follows the characters per node of the last answer (a site's nodes print alike), and a
 * chunk the transport cut short anyway is asked again in halves instead of failing to parse.
 * Shared by the Slurm connectors.
 */
export class SlurmNodeReader {
  private charsPerNode = FIRST_CHARS_PER_NODE;

  constructor(
    private readonly service: Service,
    private readonly transport: CommandTransport,
    private readonly scontrol = 'scontrol',
    private readonly fixedChunk?: number,
  ) {}

  async show(names: readonly string[]): Promise<SlurmJsonNode[]> {
    const out: SlurmJsonNode[] = [];
    const pending = [...new Set(validNodeNames(names))];
    for (let i = 0; i < pending.length; ) {
      const chunk = this.chunkSize();
      await this.showChunk(pending.slice(i, i + chunk), out);
      i += chunk;
    }
    return out;
  }

  private chunkSize(): number {
    return this.fixedChunk ?? Math.max(1, Math.min(MAX_CHUNK, Math.floor(OUTPUT_BUDGET / this.charsPerNode)));
  }

  private async showChunk(names: string[], out: SlurmJsonNode[]): Promise<void> {
    const script = shellCommand([this.scontrol, '--json', 'show', 'node', compressHostlist(names)]);
    const result = await run(this.service, this.transport, script);
    if (result.stdoutTruncated) {
      if (names.length === 1) throw new SiteServiceError(this.service, `${script}: the output of one node exceeds the transport's output limit`);
      // At least this much per node: later chunks start smaller.
      this.charsPerNode = Math.max(this.charsPerNode, Math.ceil(result.stdout.length / names.length) * 2);
      const half = Math.ceil(names.length / 2);
      await this.showChunk(names.slice(0, half), out);
      await this.showChunk(names.slice(half), out);
      return;
    }
    // scontrol exits 1 when none of the names is a node; the JSON still lists what it found.
    let body: unknown;
    try {
      body = JSON.parse(result.stdout);
    } catch (err) {
      if (result.exitCode !== 0) return;
      throw new SiteServiceError(this.service, `${script} printed invalid JSON: ${describeError(err)}`);
    }
    const parsed = slurmJsonNodes.safeParse(body);
    if (!parsed.success) throw new SiteServiceError(this.service, `${script} printed unexpected JSON: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    const wanted = new Set(names);
    let found = 0;
    for (const node of parsed.data.nodes) {
      if (!wanted.has(node.name)) continue;
      out.push(node);
      found++;
    }
    if (found > 0) this.charsPerNode = Math.ceil(result.stdout.length / found);
  }
}

/**
 * How long a Slurm command (scontrol, sinfo, squeue) may run on the head node before it is ended and
 * said: 60 s, on the site's clock (SSM's executionTimeout runs on the instance; the local transport
 * kills it). Six times scontrol's own default MessageTimeout of 10 s, so a slow slurmctld still
 * answers; without it a hung command held a run for the transport's default of 600 s.
 */
export const SLURM_COMMAND_TIMEOUT_SECONDS = 60;

/**
 * Runs a script with a deadline: a Slurm command's by default, or `'transport-default'` for a site's
 * own command of unknown length (a prepareCommand). Transport failures, a command past its deadline
 * included, become SiteServiceError (retryable) naming the command.
 */
export async function run(service: Service, transport: CommandTransport, script: string, deadline: Deadline = SLURM_COMMAND_TIMEOUT_SECONDS) {
  try {
    return await transport.run(script, deadline === 'transport-default' ? {} : { timeoutSeconds: deadline });
  } catch (err) {
    throw new SiteServiceError(service, `${script}: ${describeError(err)}`, undefined, { cause: err });
  }
}

/** Seconds a command may run, or the transport's own default. */
type Deadline = number | 'transport-default';

/** Runs a script that must exit 0. */
export async function runChecked(service: Service, transport: CommandTransport, script: string, deadline: Deadline = SLURM_COMMAND_TIMEOUT_SECONDS) {
  const result = await run(service, transport, script, deadline);
  if (result.exitCode !== 0) throw new SiteServiceError(service, `${script} exited ${result.exitCode}: ${result.stderr.trim().slice(0, 500) || 'no stderr'}`);
  return result;
}

/** Slurm through `scontrol` on a head node (SSM or local): the same node view as slurmrestd's. */
export class ScontrolWorkloadManager implements WorkloadManager {
  private readonly reader: SlurmNodeReader;
  private readonly scontrol: string;
  private readonly squeue: string;

  constructor(private readonly options: ScontrolOptions) {
    this.scontrol = options.scontrol ?? 'scontrol';
    this.squeue = options.squeue ?? 'squeue';
    this.reader = new SlurmNodeReader('workload-manager', options.transport, this.scontrol, options.showChunk);
  }

  async getNodes(names: readonly string[]): Promise<Map<string, WlmNode>> {
    const nodes = await this.reader.show(names);
    return new Map(nodes.map((n) => [n.name, toWlmNode(n)]));
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
        if (seconds === undefined) throw new SiteServiceError('workload-manager', `${script} printed an unexpected time left: ${JSON.stringify(left.slice(0, 40))}`);
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

  /** One `scontrol update NodeName=<hostlist> State=...` for many nodes (chunks of 500 keep the command line short). */
  async update(names: readonly string[], state: 'DRAIN' | 'RESUME' | 'FAIL', reason?: string): Promise<void> {
    const nodes = names.map((n, i) => validNodeName(n, `nodes[${i}]`));
    const why = reason === undefined ? undefined : validReason(reason);
    for (const hostlist of chunkHostlist(nodes, 500)) {
      const argv = [this.scontrol, 'update', `NodeName=${hostlist}`, `State=${state}`, ...(why === undefined ? [] : [`Reason=${why}`])];
      await runChecked('workload-manager', this.options.transport, shellCommand(argv));
    }
  }
}

/** squeue's %L (`[days-]hours:minutes:seconds`, `minutes:seconds`, `UNLIMITED`, `NOT_SET`) in seconds; undefined if unreadable. */
export function parseTimeLeft(text: string): number | undefined {
  if (text === 'UNLIMITED' || text === 'NOT_SET' || text === 'INVALID') return Infinity;
  const match = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$/.exec(text);
  if (!match) return undefined;
  const [, days, hours, minutes, secs] = match;
  return Number(days ?? 0) * 86400 + Number(hours ?? 0) * 3600 + Number(minutes) * 60 + Number(secs);
}
