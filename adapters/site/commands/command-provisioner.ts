import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../../../core/clock';
import { SiteServiceError, describeError } from '../../../core/errors';
import { compressHostlist, expandHostlist } from '../../../core/site/hostlist';
import { validNodeNames } from '../../../core/site/names';
import type { CommandResult, CommandTransport } from '../../../ports/command-transport';
import type { ConnectorRecords } from '../../../ports/connector-state';
import type { ProvisionAction, ProvisionActionRequest, ProvisionActionStatus, ProvisionNodeOutcome, Provisioner } from '../../../ports/provisioner';
import { fillTemplate } from './shell-quote';

export interface CommandProvisionerOptions {
  transport: CommandTransport;
  /** e.g. `{prepare: "wwctl overlay build {nodes}", deploy: "pdsh -w {nodes} /opt/site/deploy.sh"}`; `{nodes}` is a quoted hostlist. */
  commands: Record<ProvisionAction, string>;
  /** How long one action's command may run; default 3600 s (past it the transport reports it timed out: every node failed). */
  timeoutSeconds?: number;
  /** Where actions are kept between startAction and getAction: the rollout table (`ConnectorState.records('command-provisioner')`). */
  actions: ConnectorRecords<CommandAction>;
  /** The site's clock (when a start was tried). Default: the system clock. */
  clock?: Clock;
}

/**
 * What an action is, recorded before its command starts: its nodes, then its command's invocation,
 * then each node's outcome.
 */
export interface CommandAction {
  name: string;
  action: ProvisionAction;
  nodes: string[];
  /** When the last start was tried: a retry looks for a command started since then before starting one. */
  startedAt: number;
  /** Set once the command started. */
  invocationId?: string;
  /** Why the last start failed (the command did not start). */
  error?: string;
  /** Once the command ended: each node's outcome. */
  outcome?: Record<string, ProvisionNodeOutcome>;
}

/**
 * A start tried this recently, with no invocation found and no failure recorded, may still be on
 * its way (a concurrent request): wait rather than start a second command. SendCommand gives up
 * well within this.
 */
const START_GRACE_MS = 5 * 60_000;
/** SSM keeps a command's Comment to 100 characters. */
const TAG_MAX = 100;

/** `node=<name or hostlist> ok|failed`: how a command reports nodes one by one. */
const NODE_LINE = /^node=(\S+)\s+(ok|failed)\s*$/;

/**
 * Group deployments' provisioner for sites that have commands rather than a provisioner API: each
 * action runs the configured `prepare` or `deploy` command once for its batch, started without
 * waiting (the workflow starts, then polls).
 *
 * Per-node outcome convention: a line `node=<name> ok` or `node=<name> failed` on stdout (the name
 * may be a hostlist: print `node=nid[001-512] ok` rather than a line per node, SSM keeps 24,000
 * characters) settles those nodes; nodes the output does not name take the exit code (0: succeeded,
 * else failed). Output cut short by the transport, a command that times out or cannot finish fails
 * every node it did not name.
 *
 * State: an action is recorded before its command starts, then its invocation id, then its
 * outcome, in `actions`, outside this process (each activity of a deployed stack is its own Lambda
 * invocation). A retry that finds an action without an invocation (the start failed, or the process
 * stopped before recording it) first asks the transport for a command started with the action's tag
 * (over SSM, its Comment) and adopts it; only when there is none does it start the command again.
 * So a batch runs once. Over SSM the id stays valid in any process; over the local transport it
 * names a child of this one.
 */
export class CommandProvisioner implements Provisioner {
  private readonly actions: ConnectorRecords<CommandAction>;
  private readonly clock: Clock;

  constructor(private readonly options: CommandProvisionerOptions) {
    this.actions = options.actions;
    this.clock = options.clock ?? systemClock;
  }

  async startAction(request: ProvisionActionRequest): Promise<ProvisionActionStatus> {
    const now = this.clock.now();
    let action = await this.actions.get(request.name);
    if (!action) {
      const nodes = [...new Set(validNodeNames(request.nodes))];
      // Recorded before the command starts: of two concurrent requests, the one that wrote it starts it.
      const written = await this.actions.create({ name: request.name, action: request.action, nodes, startedAt: now });
      if (written.created) return this.start(written.record);
      action = written.record;
    }
    if (action.invocationId !== undefined) return this.status(action);
    const adopted = await this.startedBefore(action);
    if (adopted) return this.status(adopted);
    if (action.error === undefined && now - action.startedAt < START_GRACE_MS) return toStatus(action);
    return this.start({ ...action, startedAt: now });
  }

  /** The command an earlier attempt started (its tag, since its start), recorded as the action's. */
  private async startedBefore(action: CommandAction): Promise<CommandAction | undefined> {
    let invocationId: string | undefined;
    try {
      invocationId = await this.options.transport.findStarted(actionTag(action.name), action.startedAt);
    } catch (err) {
      throw new SiteServiceError('provisioner', `action ${action.name}: looking for its command: ${describeError(err)}`, undefined, { cause: err });
    }
    if (invocationId === undefined) return undefined;
    const { error: _error, ...rest } = action;
    const adopted: CommandAction = { ...rest, invocationId };
    await this.actions.update(adopted);
    return adopted;
  }

  private async start(action: CommandAction): Promise<ProvisionActionStatus> {
    const script = fillTemplate(this.options.commands[action.action], { nodes: compressHostlist(action.nodes) });
    let invocationId: string;
    try {
      invocationId = await this.options.transport.start(script, { timeoutSeconds: this.options.timeoutSeconds ?? 3600, tag: actionTag(action.name) });
    } catch (err) {
      const error = `${script}: ${describeError(err)}`;
      await this.actions.update({ ...action, error });
      throw new SiteServiceError('provisioner', error, undefined, { cause: err });
    }
    const { error: _error, ...rest } = action;
    const started: CommandAction = { ...rest, invocationId };
    await this.actions.update(started);
    return toStatus(started);
  }

  async getAction(name: string): Promise<ProvisionActionStatus | undefined> {
    const action = await this.actions.get(name);
    return action && this.status(action);
  }

  private async status(action: CommandAction): Promise<ProvisionActionStatus> {
    if (action.outcome || action.invocationId === undefined) return toStatus(action);
    let result: CommandResult | undefined;
    try {
      result = await this.options.transport.poll(action.invocationId);
    } catch (err) {
      // The command could not finish (SSM TimedOut, say): what it did not report, failed.
      const details = (err as { details?: { status?: string } }).details;
      if (details?.status !== 'TimedOut' && details?.status !== 'Failed' && details?.status !== 'Cancelled') {
        throw new SiteServiceError('provisioner', `action ${action.name}: ${describeError(err)}`, undefined, { cause: err });
      }
      result = { exitCode: -1, stdout: '', stderr: describeError(err), stdoutTruncated: false };
    }
    if (!result) return toStatus(action);
    const finished: CommandAction = { ...action, outcome: nodeOutcomes(action.nodes, result) };
    await this.actions.update(finished);
    return toStatus(finished);
  }
}

/** Each node's outcome from `node=<name> ok|failed` lines, the exit code for the rest. */
export function nodeOutcomes(nodes: readonly string[], result: CommandResult): Record<string, ProvisionNodeOutcome> {
  const wanted = new Set(nodes);
  const reported = new Map<string, ProvisionNodeOutcome>();
  for (const line of result.stdout.split('\n')) {
    const match = NODE_LINE.exec(line.trim());
    if (!match) continue;
    let names: string[];
    try {
      names = expandHostlist(match[1]!);
    } catch {
      continue;
    }
    for (const name of names) if (wanted.has(name)) reported.set(name, match[2] === 'ok' ? 'succeeded' : 'failed');
  }
  // Output cut short (SSM keeps 24,000 bytes): a node not named may have been named past the cut, so its outcome is unknown: failed.
  const fallback: ProvisionNodeOutcome = result.exitCode === 0 && !result.stdoutTruncated ? 'succeeded' : 'failed';
  return Object.fromEntries(nodes.map((n) => [n, reported.get(n) ?? fallback]));
}

/** The Comment an action's command carries: its name, or a digest of a name too long for SSM. */
function actionTag(name: string): string {
  const tag = `rollout-action ${name}`;
  return tag.length <= TAG_MAX ? tag : `rollout-action ${createHash('sha256').update(name).digest('hex')}`;
}

function toStatus(action: CommandAction): ProvisionActionStatus {
  return {
    name: action.name,
    action: action.action,
    status: action.outcome ? 'complete' : 'running',
    nodes: action.outcome ?? Object.fromEntries(action.nodes.map((n) => [n, 'running' as const])),
  };
}
