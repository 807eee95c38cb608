import { systemClock, type Clock } from '../../../core/clock';
import { SiteServiceError, describeError } from '../../../core/errors';
import { compressHostlist } from '../../../core/site/hostlist';
import { validNodeNames } from '../../../core/site/names';
import type { WlmNode } from '../../../core/site/site-nodes';
import type { CommandResult, CommandTransport } from '../../../ports/command-transport';
import type { WlmReadOptions } from '../../../ports/site';
import { slurmJsonNodes, slurmStateWords, toWlmNode } from '../slurm-json';
import { shellCommand } from './shell-quote';

type Service = SiteServiceError['service'];

/** A Slurm release as `scontrol --version` names it (`slurm 24.11.7`, Debian's `slurm-wlm 22.05.8`). */
export interface SlurmVersion {
  major: number;
  minor: number;
  text: string;
}

/** `scontrol --json` exists from Slurm 23.02 on (22.05 answers `scontrol: unrecognized option '--json'`). */
export function hasScontrolJson(version: SlurmVersion): boolean {
  return version.major > 23 || (version.major === 23 && version.minor >= 2);
}

export function parseSlurmVersion(stdout: string): SlurmVersion | undefined {
  const match = /^slurm(?:-wlm)?\s+(\d+)\.(\d+)(?:\.\S+)?\s*$/m.exec(stdout.trim());
  return match ? { major: Number(match[1]), minor: Number(match[2]), text: `${match[1]}.${match[2]}` } : undefined;
}

/**
 * The compact listing: name, every state word, reason (last: it may hold anything but a newline).
 * `:0|` prints a field unpadded with `|` after it (sinfo's `-O type[:[.]size[suffix]]`, 20.02 on).
 */
export const COMPACT_FORMAT = 'NodeList:0|,StateComplete:0|,Reason:0';

/** Output characters a call plans for: SSM keeps 24,000; the rest is margin for longer lines. */
const OUTPUT_BUDGET = 20_000;
/** Before any answer was seen: a node as Slurm 24's `scontrol --json` prints it (pretty, ~60 fields). */
const FIRST_DETAIL_CHARS = 3_000;
/** A compact line: name, state words and a reason; sized up from what is seen. */
const FIRST_COMPACT_CHARS = 80;
const MAX_CHUNK = 500;

/** Flags under which a node's boot time cannot have moved on since its last detail read (it is still down or rebooting). */
const WAITING_FLAGS = ['NOT_RESPONDING', 'REBOOT_REQUESTED', 'REBOOT_ISSUED', 'POWERING_UP'];

interface Listed {
  node: WlmNode;
  line: string;
  /** When it was listed (the site's clock). */
  at: number;
}

/** A listing this young is reused by the next read (one increment's reads: the workload manager's, then each boot session's). */
const LISTING_REUSE_MS = 500;

export type ReadOptions = WlmReadOptions;

export interface SlurmNodeReaderOptions {
  /** Paths or names of the commands on the head node; default `scontrol`, `sinfo`. */
  scontrol?: string;
  sinfo?: string;
  /** Nodes per read command, fixed; default: sized from the output seen so far. */
  fixedChunk?: number;
  /** false: every read is the full detail of every node, as before the compact listing (what the benchmarks compare with). Default true. */
  compact?: boolean;
  /** The site's clock, by which a listing is young enough to reuse; default the system clock. */
  clock?: Clock;
}

/**
 * Reads Slurm nodes over a command transport, cheaply: one compact `sinfo` listing of every node
 * asked for (a line of ~40 characters each: state words and reason, all a decision needs but the
 * boot time), then the full detail only of the nodes the listing leaves out (to learn whether Slurm
 * knows them) and of those whose boot is judged now, look up, and whose boot time as last read is
 * older than their reboot (so a node's detail is read about once per reboot). The detail is
 * `scontrol --json show node <hostlist>` on Slurm 23.02 and later, `scontrol -o show node` (one
 * `Key=Value` line per node, times as epoch seconds through SLURM_TIME_FORMAT) on 22.05, decided
 * once from `scontrol --version`. Reads are chunked to fit the transport's output, and a chunk the
 * transport cut short is asked again in halves. A command that fails (an unknown option, a
 * controller that does not answer) or prints what cannot be read throws SiteServiceError naming the
 * command and its error: a node is absent from the answer only when Slurm says it does not know it.
 *
 * Boot times last read are kept in this process (a cold reader, a fresh Lambda container, reads the
 * nodes being judged in full once): a stale boot time is only ever older, so it can delay a verdict,
 * never make one.
 */
export class SlurmNodeReader {
  private version: SlurmVersion | undefined;
  /** Each node's boot time as its last detail read gave it (epoch ms). */
  private readonly bootTimes = new Map<string, number>();
  private readonly listings = new Map<string, Listed>();
  private detailChars = FIRST_DETAIL_CHARS;
  private compactChars = FIRST_COMPACT_CHARS;

  constructor(
    private readonly transport: CommandTransport,
    private readonly options: SlurmNodeReaderOptions = {},
  ) {}

  private get scontrol(): string {
    return this.options.scontrol ?? 'scontrol';
  }

  private get fixedChunk(): number | undefined {
    return this.options.fixedChunk;
  }

  /** The site's Slurm release, asked once (a failed ask is asked again next time). */
  async slurmVersion(service: Service): Promise<SlurmVersion> {
    if (this.version) return this.version;
    const script = shellCommand([this.scontrol, '--version']);
    const result = await checked(service, this.transport, script);
    const version = parseSlurmVersion(result.stdout);
    if (!version) throw new SiteServiceError(service, `${script} printed no Slurm version: ${JSON.stringify(result.stdout.trim().slice(0, 100))}`);
    this.version = version;
    return version;
  }

  /** The nodes Slurm knows among `names`, by name. */
  async read(service: Service, names: readonly string[], options: ReadOptions = {}): Promise<Map<string, WlmNode>> {
    const wanted = [...new Set(validNodeNames(names))];
    const out = new Map<string, WlmNode>();
    if (wanted.length === 0) return out;
    const since = options.bootedSince ?? new Map<string, number>();
    const listed = new Map<string, Listed>();
    if (this.options.compact !== false) {
      const now = (this.options.clock ?? systemClock).now();
      const toList: string[] = [];
      for (const name of wanted) {
        const recent = this.listings.get(name);
        if (recent && now - recent.at >= 0 && now - recent.at < LISTING_REUSE_MS) listed.set(name, recent);
        else toList.push(name);
      }
      const fresh = new Map<string, Listed>();
      await this.inChunks(
        toList,
        () => this.compactChars,
        (chunk) => this.compact(service, chunk, fresh, now),
      );
      for (const [name, entry] of fresh) {
        listed.set(name, entry);
        this.listings.set(name, entry);
      }
    }

    const detail: string[] = [];
    for (const name of wanted) {
      const entry = listed.get(name);
      const bootTime = this.bootTimes.get(name);
      // Not listed (a node in no partition, or no node at all): the detail read says which.
      if (!entry) detail.push(name);
      // Its boot is judged now, it looks up, and the boot time last read is older than the reboot: read it again.
      else if (since.has(name) && (bootTime ?? -Infinity) < since.get(name)! && !entry.node.flags.some((f) => WAITING_FLAGS.includes(f))) detail.push(name);
      else out.set(name, { ...entry.node, ...(bootTime !== undefined ? { bootTime } : {}) });
    }
    if (detail.length > 0) {
      const version = await this.slurmVersion(service);
      const found = new Map<string, WlmNode>();
      const read = hasScontrolJson(version)
        ? (chunk: string[]) => this.showJson(service, chunk, found)
        : (chunk: string[]) => this.showOneLiners(service, chunk, found);
      await this.inChunks(detail, () => this.detailChars, read);
      for (const name of detail) {
        const node = found.get(name);
        if (!node) {
          this.bootTimes.delete(name);
          continue;
        }
        out.set(name, node);
        if (node.bootTime !== undefined) this.bootTimes.set(name, node.bootTime);
      }
    }
    return out;
  }

  /** Forgets the listing of nodes just changed (drained, resumed, rebooted): the next read lists them again. */
  invalidate(names: readonly string[]): void {
    for (const name of names) this.listings.delete(name);
  }

  private async inChunks(names: readonly string[], charsPerNode: () => number, read: (chunk: string[]) => Promise<void>): Promise<void> {
    for (let i = 0; i < names.length; ) {
      const size = this.fixedChunk ?? Math.max(1, Math.min(MAX_CHUNK, Math.floor(OUTPUT_BUDGET / charsPerNode())));
      await read(names.slice(i, i + size));
      i += size;
    }
  }

  /** Runs a read of `names`; a cut output is read again in halves (and later chunks start smaller). */
  private async runRead(
    service: Service,
    names: string[],
    script: string,
    grow: (charsPerNode: number) => void,
    again: (half: string[]) => Promise<void>,
  ): Promise<CommandResult | undefined> {
    const result = await run(service, this.transport, script);
    if (!result.stdoutTruncated) return result;
    if (names.length === 1) throw new SiteServiceError(service, `${script}: the output of one node exceeds the transport's output limit`);
    grow(Math.ceil(result.stdout.length / names.length) * 2);
    const half = Math.ceil(names.length / 2);
    await again(names.slice(0, half));
    await again(names.slice(half));
    return undefined;
  }

  private async compact(service: Service, names: string[], out: Map<string, Listed>, at: number): Promise<void> {
    const script = shellCommand([this.options.sinfo ?? 'sinfo', '-h', '-N', '-n', compressHostlist(names), '-O', COMPACT_FORMAT]);
    const result = await this.runRead(
      service,
      names,
      script,
      (c) => (this.compactChars = Math.max(this.compactChars, c)),
      (half) => this.compact(service, half, out, at),
    );
    if (!result) return;
    if (result.exitCode !== 0) throw failed(service, script, result);
    const wanted = new Set(names);
    let count = 0;
    for (const line of result.stdout.split('\n')) {
      if (line.trim() === '') continue;
      const parsed = parseCompactLine(line);
      if (!parsed) throw new SiteServiceError(service, `${script} printed an unexpected line: ${JSON.stringify(line.slice(0, 120))}`);
      if (!wanted.has(parsed.node.name) || out.has(parsed.node.name)) continue;
      out.set(parsed.node.name, { ...parsed, at });
      count++;
    }
    if (count > 0) this.compactChars = Math.max(FIRST_COMPACT_CHARS, Math.ceil(result.stdout.length / count));
  }

  private async showJson(service: Service, names: string[], out: Map<string, WlmNode>): Promise<void> {
    const script = shellCommand([this.scontrol, '--json', 'show', 'node', compressHostlist(names)]);
    const result = await this.runRead(
      service,
      names,
      script,
      (c) => (this.detailChars = Math.max(this.detailChars, c)),
      (half) => this.showJson(service, half, out),
    );
    if (!result) return;
    let body: unknown;
    try {
      body = JSON.parse(result.stdout);
    } catch (err) {
      // scontrol exits 1 when none of the names is a node; anything else is a failure to read.
      if (result.exitCode !== 0 && saysNotFound(result)) return;
      if (result.exitCode !== 0) throw failed(service, script, result);
      throw new SiteServiceError(service, `${script} printed invalid JSON: ${describeError(err)}`);
    }
    const parsed = slurmJsonNodes.safeParse(body);
    if (!parsed.success) throw new SiteServiceError(service, `${script} printed unexpected JSON: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    const found = this.collect(names, parsed.data.nodes.map(toWlmNode), out);
    if (found > 0) this.detailChars = Math.ceil(result.stdout.length / found);
  }

  private async showOneLiners(service: Service, names: string[], out: Map<string, WlmNode>): Promise<void> {
    const script = `env SLURM_TIME_FORMAT=%s ${shellCommand([this.scontrol, '-o', 'show', 'node', compressHostlist(names)])}`;
    const result = await this.runRead(
      service,
      names,
      script,
      (c) => (this.detailChars = Math.max(this.detailChars, c)),
      (half) => this.showOneLiners(service, half, out),
    );
    if (!result) return;
    const nodes: WlmNode[] = [];
    for (const line of result.stdout.split('\n')) {
      if (!line.startsWith('NodeName=')) continue;
      const node = parseOneLiner(line);
      if (!node) throw new SiteServiceError(service, `${script} printed an unexpected line: ${JSON.stringify(line.slice(0, 120))}`);
      nodes.push(node);
    }
    // Exit 1 with `Node x not found` for unknown names (the known ones are still printed).
    if (result.exitCode !== 0 && !saysNotFound(result)) throw failed(service, script, result);
    const found = this.collect(names, nodes, out);
    if (found > 0) this.detailChars = Math.ceil(result.stdout.length / found);
  }

  private collect(names: readonly string[], nodes: readonly WlmNode[], out: Map<string, WlmNode>): number {
    const wanted = new Set(names);
    let found = 0;
    for (const node of nodes) {
      if (!wanted.has(node.name)) continue;
      out.set(node.name, node);
      found++;
    }
    return found;
  }
}

/** `c01|idle+drain+reboot_requested|rolling-upgrade : reboot issued` (a reason of `none` is none). */
export function parseCompactLine(line: string): { node: WlmNode; line: string } | undefined {
  const first = line.indexOf('|');
  const second = first < 0 ? -1 : line.indexOf('|', first + 1);
  if (first <= 0 || second < 0) return undefined;
  const name = line.slice(0, first).trim();
  const state = line.slice(first + 1, second).trim();
  const reasonText = line.slice(second + 1).trim();
  if (!name || !state) return undefined;
  const { base, flags } = slurmStateWords(state.split('+'));
  const reason = reasonText === '' || reasonText === 'none' || reasonText === '(null)' ? undefined : reasonText;
  return { node: { name, base, flags, ...(reason !== undefined ? { reason } : {}) }, line: `${state}|${reasonText}` };
}

/**
 * One node of `scontrol -o show node` (Slurm 22.05, src/api/node_info.c slurm_sprint_node_table):
 * space-separated `Key=Value` words, except `Reason=`, which runs to the end of the line (or to a
 * `Comment=` or `Extra=` after it) and ends with ` [user@time]`. Times are epoch seconds
 * (SLURM_TIME_FORMAT=%s); `None`/`Unknown` are no time.
 */
export function parseOneLiner(line: string): WlmNode | undefined {
  const reasonAt = line.search(/ Reason=/);
  const head = reasonAt < 0 ? line : line.slice(0, reasonAt);
  const values = new Map<string, string>();
  for (const word of head.split(/\s+/)) {
    const eq = word.indexOf('=');
    if (eq > 0) values.set(word.slice(0, eq), word.slice(eq + 1));
  }
  const name = values.get('NodeName');
  const state = values.get('State');
  if (!name || !state) return undefined;
  let reason: string | undefined;
  if (reasonAt >= 0) {
    const tail = line.slice(reasonAt + ' Reason='.length);
    const end = tail.search(/ (?:Comment|Extra)=/);
    reason = (end < 0 ? tail : tail.slice(0, end)).replace(/ \[[^\]]*@[^\]]*\]\s*$/, '').trim() || undefined;
  }
  const { base, flags } = slurmStateWords(state.split('+'));
  const boot = Number(values.get('BootTime'));
  return { name, base, flags, ...(reason !== undefined ? { reason } : {}), ...(Number.isFinite(boot) && boot > 0 ? { bootTime: boot * 1000 } : {}) };
}

function saysNotFound(result: CommandResult): boolean {
  return /not found|Invalid node name/i.test(`${result.stdout}\n${result.stderr}`);
}

function failed(service: Service, script: string, result: CommandResult): SiteServiceError {
  const words = (result.stderr.trim() || result.stdout.trim()).slice(0, 500) || 'no output';
  return new SiteServiceError(service, `${script} exited ${result.exitCode}: ${words}`);
}

/**
 * How long a Slurm command (scontrol, sinfo, squeue) may run on the head node before it is ended and
 * said: 60 s, on the site's clock (SSM's executionTimeout runs on the instance; the local transport
 * kills it). Six times scontrol's own default MessageTimeout of 10 s, so a slow slurmctld still
 * answers; without it a hung command held a run for the transport's default of 600 s.
 */
export const SLURM_COMMAND_TIMEOUT_SECONDS = 60;

/** Seconds a command may run, or the transport's own default (a site's own command of unknown length, such as a prepareCommand). */
export type Deadline = number | 'transport-default';

/** Runs a script with a deadline (a Slurm command's by default); transport failures, a command past its deadline included, become SiteServiceError (retryable) naming the command. */
export async function run(
  service: Service,
  transport: CommandTransport,
  script: string,
  deadline: Deadline = SLURM_COMMAND_TIMEOUT_SECONDS,
): Promise<CommandResult> {
  try {
    return await transport.run(script, deadline === 'transport-default' ? {} : { timeoutSeconds: deadline });
  } catch (err) {
    throw new SiteServiceError(service, `${script}: ${describeError(err)}`, undefined, { cause: err });
  }
}

/** Runs a script that must exit 0. */
export async function checked(
  service: Service,
  transport: CommandTransport,
  script: string,
  deadline: Deadline = SLURM_COMMAND_TIMEOUT_SECONDS,
): Promise<CommandResult> {
  const result = await run(service, transport, script, deadline);
  if (result.exitCode !== 0) throw failed(service, script, result);
  return result;
}
