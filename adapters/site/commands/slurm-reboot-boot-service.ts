import { systemClock, type Clock } from '../../../core/clock';
import { compressHostlist, expandHostlist } from '../../../core/site/hostlist';
import { validLabel, validNodeNames, validReason, validTemplate } from '../../../core/site/names';
import type { CommandTransport } from '../../../ports/command-transport';
import type { ConnectorRecords } from '../../../ports/connector-state';
import type { BootNodeOutcome, BootService, BootSessionRequest, BootSessionStatus, Inventory } from '../../../ports/site';
import { runChecked, SlurmNodeReader } from './scontrol-workload-manager';
import { fillTemplate, shellCommand } from './shell-quote';
import { toWlmNode } from '../slurm-json';

/** What a boot session is, kept from its request: its nodes and when the reboot was asked for. */
export interface SlurmRebootSession {
  name: string;
  templateName: string;
  nodes: string[];
  requestedAt: number;
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
  /** Reason shown on the nodes while their reboot is pending. Default `rolling-upgrade reboot`. */
  reason?: string;
  scontrol?: string;
  /** The site's clock: boot times are compared with it. */
  clock?: Clock;
  /** Where sessions are kept between createSession and getSession: the rollout table (`ConnectorState.records('slurm-reboot')`). */
  sessions: ConnectorRecords<SlurmRebootSession>;
}

/** Reasons slurmctld gives a node whose reboot went wrong. */
const REBOOT_FAILURE = /reboot|resumetimeout|resume timeout/i;
const PENDING = ['REBOOT_REQUESTED', 'REBOOT_ISSUED'];

/**
 * Reboots through Slurm itself (`scontrol reboot ASAP nextstate=RESUME`) for sites without a boot
 * service, after an optional prepare command that selects the image.
 *
 * A node's outcome is derived from Slurm alone: succeeded once slurmd registered (boot_time) at or
 * after the request and no reboot is pending; failed when the node is DOWN or FAIL with a reboot
 * reason (slurmctld's "reboot timed out" after ResumeTimeout); booting otherwise.
 *
 * State: a session's nodes and request time are kept in `sessions`, outside this process: each
 * activity of a deployed stack is its own Lambda invocation, and "rebooted since the request" must
 * be judged by the request time an earlier invocation wrote.
 */
export class SlurmRebootBootService implements BootService {
  private readonly reader: SlurmNodeReader;
  private readonly sessions: ConnectorRecords<SlurmRebootSession>;
  private readonly clock: Clock;

  constructor(private readonly options: SlurmRebootOptions) {
    this.reader = new SlurmNodeReader('boot-service', options.transport, options.scontrol);
    this.clock = options.clock ?? systemClock;
    this.sessions = options.sessions;
    if (options.reason !== undefined) validReason(options.reason, 'reason');
  }

  async templateExists(templateName: string): Promise<boolean> {
    validTemplate(templateName, 'templateName');
    return this.options.templates === undefined || this.options.templates.includes(templateName);
  }

  async createSession(request: BootSessionRequest): Promise<BootSessionStatus> {
    const existing = await this.sessions.get(request.name);
    if (existing) return this.status(existing);
    const template = validTemplate(request.templateName, 'templateName');
    const nodes = await this.resolveLimit(request.limit);
    const hostlist = compressHostlist(nodes);
    // Saved before the reboot: a retry after a crash finds it and does not reboot twice; of two
    // concurrent requests, only the one whose record was written reboots.
    const { record: session, created } = await this.sessions.create({ name: request.name, templateName: template, nodes, requestedAt: this.clock.now() });
    if (!created) return this.status(session);
    const { transport } = this.options;
    if (this.options.prepareCommand) await runChecked('boot-service', transport, fillTemplate(this.options.prepareCommand, { template, nodes: hostlist }));
    const reason = this.options.reason ?? 'rolling-upgrade reboot';
    await runChecked('boot-service', transport, shellCommand([this.options.scontrol ?? 'scontrol', 'reboot', 'ASAP', 'nextstate=RESUME', `reason=${reason}`, hostlist]));
    return this.status(session);
  }

  async getSession(name: string): Promise<BootSessionStatus | undefined> {
    const session = await this.sessions.get(name);
    return session && this.status(session);
  }

  /** A group label (resolved through the inventory) or comma-separated node names / a hostlist. */
  private async resolveLimit(limit: string): Promise<string[]> {
    if (/[,[]/.test(limit) === false) {
      try {
        return validNodeNames(await this.options.inventory.getGroupMembers(validLabel(limit, 'limit')), 'limit members');
      } catch (err) {
        if ((err as { name?: string }).name !== 'GroupNotFoundError') throw err;
      }
    }
    return validNodeNames(expandHostlist(limit), 'limit');
  }

  private async status(session: SlurmRebootSession): Promise<BootSessionStatus> {
    const found = new Map((await this.reader.show(session.nodes)).map((n) => [n.name, toWlmNode(n)]));
    const nodes: Record<string, BootNodeOutcome> = {};
    for (const name of session.nodes) {
      const node = found.get(name);
      if (!node) nodes[name] = 'failed';
      else if (node.flags.some((f) => PENDING.includes(f))) nodes[name] = 'booting';
      else if (node.bootTime !== undefined && node.bootTime >= session.requestedAt) nodes[name] = 'succeeded';
      else if ((node.base === 'DOWN' || node.flags.includes('FAIL')) && REBOOT_FAILURE.test(node.reason ?? '')) nodes[name] = 'failed';
      else nodes[name] = 'booting';
    }
    const done = Object.values(nodes).every((o) => o === 'succeeded' || o === 'failed');
    return { name: session.name, status: done ? 'complete' : 'running', nodes };
  }
}
