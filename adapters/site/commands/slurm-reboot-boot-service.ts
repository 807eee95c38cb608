import { systemClock, type Clock } from '../../../core/clock';
import { describeError, EmptyBootSessionError, SiteServiceError } from '../../../core/errors';
import { compressHostlist } from '../../../core/site/hostlist';
import { validLabel, validNodeNames, validTemplate } from '../../../core/site/names';
import type { CommandTransport } from '../../../ports/command-transport';
import type { ConnectorRecords } from '../../../ports/connector-state';
import type { BootLimit, BootNodeOutcome, BootService, BootSessionRequest, BootSessionStatus, Inventory, WlmNode } from '../../../ports/site';
import { checked as runChecked, SlurmNodeReader } from './slurm-node-reader';
import { fillTemplate, shellCommand } from './shell-quote';

/**
 * What a boot session is, kept from its request: its nodes, how far its commands got, and when the
 * reboot was asked of slurmctld. Each step is recorded once it succeeded, so a retried request runs
 * again only what failed.
 */
export interface SlurmRebootSession {
  name: string;
  templateName: string;
  nodes: string[];
  /** The prepare command (image selection) succeeded, or there is none. */
  prepared: boolean;
  /** `scontrol reboot` succeeded for every node. */
  rebooted: boolean;
  /** When `scontrol reboot` was first sent (before it ran): a node is back once slurmd registered at or after it. Unset until then. */
  requestedAt?: number;
  /** Attempts at the commands so far, and when the last one started (an attempt in flight is not run twice at once). */
  attempts: number;
  attemptStartedAt: number;
  /** The last attempt's failure, in the command's own words. */
  error?: string;
}

export interface SlurmRebootOptions {
  transport: CommandTransport;
  /** Resolves a group-label limit to its nodes (the upgrading group). */
  inventory: Inventory;
  /**
   * Selects the new image before the reboot, e.g. `wwctl node set --yes --image {template} {nodes}`
   * (Warewulf 4) or `nodeset {nodes} osimage={template}` (xCAT). `{template}` and `{nodes}` (a hostlist)
   * are substituted as validated, single-quoted words. None: the reboot alone.
   */
  prepareCommand?: string;
  /** Templates that exist; none given: every valid template name is accepted (Slurm has no template list). */
  templates?: readonly string[];
  scontrol?: string;
  sinfo?: string;
  /** The site's node reader, shared with its other Slurm connectors; default its own. */
  reader?: SlurmNodeReader;
  /** The site's clock: boot times are compared with it. */
  clock?: Clock;
  /** Where sessions are kept between createSession and getSession: the rollout table (`ConnectorState.records('slurm-reboot')`). */
  sessions: ConnectorRecords<SlurmRebootSession>;
  /** Attempts at the prepare and reboot commands before the session fails with the last error. Default 3. */
  maxAttempts?: number;
}

const DEFAULT_MAX_ATTEMPTS = 3;
/**
 * An attempt that started this long ago without recording its end died (its process was stopped):
 * a later request takes over. Longer than a command may run (SSM's executionTimeout, 600 s).
 */
const ATTEMPT_STALE_MS = 15 * 60_000;

/** What slurmctld appends to a node's reason when its reboot did not come back within ResumeTimeout (node_mgr.c). */
const REBOOT_FAILURE = /reboot timed out|resumetimeout|resume timeout/i;
const PENDING = ['REBOOT_REQUESTED', 'REBOOT_ISSUED'];

/**
 * Reboots through Slurm itself for sites without a boot service, after an optional prepare command
 * that selects the image: `scontrol reboot <hostlist>` of nodes the run has drained and quiesced,
 * with no `ASAP`, no `nextstate` and no `reason`. Slurm's own options would put the nodes back in
 * service behind the run's back: `nextstate=RESUME` (and `ASAP`, which implies it) clears every
 * drain when the node registers, ours and an admin's (`node_flags &= ~NODE_STATE_DRAIN` when
 * next_state is set: src/slurmctld/node_mgr.c validate_node_specs, 22.05 to 25.x), so a node would
 * take jobs before the run judged it; `reason=` replaces the node's reason (an admin's included,
 * proc_req.c _slurm_rpc_reboot_nodes). Without them the node keeps its drain and its reason, to
 * which slurmctld appends ` : reboot issued`; the run lifts its own drain once it judged the node.
 *
 * A node's outcome is derived from Slurm alone: succeeded once slurmd registered (boot_time) at or
 * after the request and no reboot is pending; failed when the node is DOWN or FAIL with a reboot
 * reason (slurmctld's "reboot timed out" after ResumeTimeout); booting otherwise.
 *
 * State: a session's nodes, progress and request time are kept in `sessions`, outside this
 * process: each activity of a deployed stack is its own Lambda invocation, and "rebooted since the
 * request" must be judged by the request time an earlier invocation wrote. A failed prepare or
 * reboot command fails the request (SiteServiceError with the command's stderr, retried by the
 * workflow); the retry runs again only what failed, and re-sends the reboot only to nodes with no
 * reboot pending or done since the first one was sent, so no node reboots twice for one session.
 * Until then a session whose last attempt failed (or died) says so (startError): its nodes are not
 * booting yet, and the run asks again. After `maxAttempts` failures the session ends failed with the last error.
 */
export class SlurmRebootBootService implements BootService {
  readonly progressFromNodes = true;
  private readonly reader: SlurmNodeReader;
  private readonly sessions: ConnectorRecords<SlurmRebootSession>;
  private readonly clock: Clock;
  private readonly maxAttempts: number;

  constructor(private readonly options: SlurmRebootOptions) {
    this.reader =
      options.reader ??
      new SlurmNodeReader(options.transport, {
        ...(options.scontrol ? { scontrol: options.scontrol } : {}),
        ...(options.sinfo ? { sinfo: options.sinfo } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
      });
    this.clock = options.clock ?? systemClock;
    this.sessions = options.sessions;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  }

  async templateExists(templateName: string): Promise<boolean> {
    validTemplate(templateName, 'templateName');
    return this.options.templates === undefined || this.options.templates.includes(templateName);
  }

  /** The profile's list of templates; none when it has none (any name is taken). */
  async templateNames(): Promise<string[]> {
    return [...(this.options.templates ?? [])].sort();
  }

  async createSession(request: BootSessionRequest): Promise<BootSessionStatus> {
    const now = this.clock.now();
    let session = await this.sessions.get(request.name);
    if (!session) {
      const template = validTemplate(request.templateName, 'templateName');
      const nodes = await this.resolveLimit(request.name, request.limit);
      const prepared = this.options.prepareCommand === undefined;
      // Written before any command: of two concurrent requests only the one that wrote it runs them.
      const written = await this.sessions.create({
        name: request.name,
        templateName: template,
        nodes,
        prepared,
        rebooted: false,
        attempts: 1,
        attemptStartedAt: now,
      });
      if (!written.created) return this.status(written.record);
      session = written.record;
    } else {
      if (!this.resumable(session, now)) return this.status(session);
      session = { ...session, attempts: session.attempts + 1, attemptStartedAt: now };
      delete session.error;
      await this.sessions.update(session);
    }
    let sentNow: readonly string[];
    try {
      ({ session, sentNow } = await this.runCommands(session));
    } catch (err) {
      // What the failed attempt got done is in the table (each step recorded as it succeeded).
      const failed = { ...((await this.sessions.get(session.name)) ?? session), error: describeError(err) };
      await this.sessions.update(failed);
      if (failed.attempts < this.maxAttempts)
        throw err instanceof SiteServiceError ? err : new SiteServiceError('boot-service', failed.error, undefined, { cause: err });
      return this.status(failed);
    }
    return this.status(session, sentNow);
  }

  /** An unfinished session whose last attempt failed (or died) and that has attempts left. */
  private resumable(session: SlurmRebootSession, now: number): boolean {
    if (session.rebooted || session.attempts >= this.maxAttempts) return false;
    return session.error !== undefined || now - session.attemptStartedAt >= ATTEMPT_STALE_MS;
  }

  /** The commands not done yet, each recorded once it succeeded; `sentNow`: the nodes this call's `scontrol reboot` went to. */
  private async runCommands(start: SlurmRebootSession): Promise<{ session: SlurmRebootSession; sentNow: readonly string[] }> {
    let session = start;
    const { transport, prepareCommand } = this.options;
    if (!session.prepared && prepareCommand !== undefined) {
      // The site's own command (wwctl, an image build): its length is the site's, so the transport's deadline, not a Slurm command's.
      const prepare = fillTemplate(prepareCommand, { template: validTemplate(session.templateName, 'templateName'), nodes: compressHostlist(session.nodes) });
      await runChecked('boot-service', transport, prepare, 'transport-default');
      session = { ...session, prepared: true };
      await this.sessions.update(session);
    }
    const first = session.requestedAt === undefined;
    // A reboot sent before may have reached slurmctld even though its command failed: those nodes have it already.
    const toReboot = first ? session.nodes : await this.withoutReboot(session.nodes, session.requestedAt!);
    if (first) {
      session = { ...session, requestedAt: this.clock.now() };
      await this.sessions.update(session);
    }
    this.reader.invalidate(toReboot);
    if (toReboot.length > 0)
      await runChecked('boot-service', transport, shellCommand([this.options.scontrol ?? 'scontrol', 'reboot', compressHostlist(toReboot)]));
    session = { ...session, rebooted: true };
    await this.sessions.update(session);
    return { session, sentNow: toReboot };
  }

  /** Of `names`, those with no reboot pending and none done since `since`. */
  private async withoutReboot(names: readonly string[], since: number): Promise<string[]> {
    const found = await this.reader.read('boot-service', names, { bootedSince: new Map(names.map((n) => [n, since])) });
    return names.filter((name) => {
      const node = found.get(name);
      return node !== undefined && !node.flags.some((f) => PENDING.includes(f)) && !(node.bootTime !== undefined && node.bootTime >= since);
    });
  }

  async getSession(name: string): Promise<BootSessionStatus | undefined> {
    const session = await this.sessions.get(name);
    return session && this.status(session);
  }

  /**
   * The nodes of a limit: its list, or its group's members through the inventory (GroupNotFoundError
   * for a group that does not exist). A limit that names no node is the run's error: nothing is booted.
   */
  private async resolveLimit(session: string, limit: BootLimit): Promise<string[]> {
    if ('label' in limit) {
      const label = validLabel(limit.label, 'limit.label');
      const members = validNodeNames(await this.options.inventory.getGroupMembers(label), 'limit members');
      if (members.length === 0) throw new EmptyBootSessionError('boot-service', session, `group '${label}' has no members in the inventory`);
      return [...new Set(members)];
    }
    const nodes = validNodeNames(limit.nodes, 'limit.nodes');
    if (nodes.length === 0) throw new EmptyBootSessionError('boot-service', session, 'its limit lists no node');
    return [...new Set(nodes)];
  }

  /**
   * The session as Slurm shows its nodes. Nodes sent their reboot a moment ago (`sentNow`, by the createSession
   * that answers) are booting without a read: slurmctld holds them REBOOT_REQUESTED or REBOOT_ISSUED until they
   * register, and the read would cost slurmctld 2 RPCs a boot session to say so (issue 29's RPCs per node-upgrade).
   */
  private async status(session: SlurmRebootSession, sentNow: readonly string[] = []): Promise<BootSessionStatus> {
    if (!session.rebooted) {
      // Not every node was sent its reboot: pending while attempts are left, failed with the last error after.
      const gaveUp = session.error !== undefined && session.attempts >= this.maxAttempts;
      const outcome: BootNodeOutcome = gaveUp ? 'failed' : 'pending';
      // Attempts left and the last one failed (or died): createSession again resumes it.
      const startError = gaveUp
        ? undefined
        : (session.error ?? (this.resumable(session, this.clock.now()) ? `its attempt ${session.attempts} started and never ended` : undefined));
      return {
        name: session.name,
        status: gaveUp ? 'complete' : 'running',
        ...(gaveUp ? { error: `${session.error} (after ${session.attempts} attempts)` } : {}),
        ...(startError !== undefined ? { startError: `${startError} (attempt ${session.attempts} of ${this.maxAttempts})` } : {}),
        nodes: Object.fromEntries(session.nodes.map((n) => [n, outcome])),
      };
    }
    const requestedAt = session.requestedAt!;
    const booting = new Set(sentNow);
    const unread = session.nodes.filter((n) => !booting.has(n));
    const found =
      unread.length > 0
        ? await this.reader.read('boot-service', unread, { bootedSince: new Map(unread.map((n) => [n, requestedAt])) })
        : new Map<string, WlmNode>();
    const nodes: Record<string, BootNodeOutcome> = {};
    for (const name of session.nodes) {
      const node = found.get(name);
      if (booting.has(name)) nodes[name] = 'booting';
      else if (!node) nodes[name] = 'failed';
      else if (node.flags.some((f) => PENDING.includes(f))) nodes[name] = 'booting';
      else if (node.bootTime !== undefined && node.bootTime >= requestedAt) nodes[name] = 'succeeded';
      else if ((node.base === 'DOWN' || node.flags.includes('FAIL')) && REBOOT_FAILURE.test(node.reason ?? '')) nodes[name] = 'failed';
      else nodes[name] = 'booting';
    }
    const done = Object.values(nodes).every((o) => o === 'succeeded' || o === 'failed');
    return { name: session.name, status: done ? 'complete' : 'running', nodes };
  }
}
