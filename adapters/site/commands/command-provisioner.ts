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
}

/** What an action is, kept from its start: its command's invocation and its nodes. */
export interface CommandAction {
  name: string;
  action: ProvisionAction;
  nodes: string[];
  invocationId: string;
  /** Once the command ended: each node's outcome. */
  outcome?: Record<string, ProvisionNodeOutcome>;
}

/** `node=<name or hostlist> ok|failed`: how a command reports nodes one by one. */
const NODE_LINE = /^node=(\S+)\s+(ok|failed)\s*$/;

/**
 * Group deployments' provisioner for sites that have commands rather than a provisioner API: each
 * action runs the configured `prepare` or `deploy` command once for its batch, started without
 * waiting (the workflow starts, then polls).
 *
 * Per-node outcome convention: a line `node=<name> ok` or `node=<name> failed` on stdout (the name
 * may be a hostlist) settles those nodes; nodes the output does not name take the exit code (0:
 * succeeded, else failed). A command that times out or cannot finish fails every node it did not name.
 *
 * State: an action's invocation id, then its outcome, are kept in `actions`, outside this process
 * (each activity of a deployed stack is its own Lambda invocation). Over SSM the id stays valid in
 * any process; over the local transport it names a child of this one.
 */
export class CommandProvisioner implements Provisioner {
  private readonly actions: ConnectorRecords<CommandAction>;

  constructor(private readonly options: CommandProvisionerOptions) {
    this.actions = options.actions;
  }

  async startAction(request: ProvisionActionRequest): Promise<ProvisionActionStatus> {
    const existing = await this.actions.get(request.name);
    if (existing) return this.status(existing);
    const nodes = [...new Set(validNodeNames(request.nodes))];
    const script = fillTemplate(this.options.commands[request.action], { nodes: compressHostlist(nodes) });
    let invocationId: string;
    try {
      invocationId = await this.options.transport.start(script, { timeoutSeconds: this.options.timeoutSeconds ?? 3600 });
    } catch (err) {
      throw new SiteServiceError('provisioner', `${script}: ${describeError(err)}`, undefined, { cause: err });
    }
    // A concurrent start of the same name that wrote first wins: its command is the action's.
    const { record: action, created } = await this.actions.create({ name: request.name, action: request.action, nodes, invocationId });
    return created ? toStatus(action) : this.status(action);
  }

  async getAction(name: string): Promise<ProvisionActionStatus | undefined> {
    const action = await this.actions.get(name);
    return action && this.status(action);
  }

  private async status(action: CommandAction): Promise<ProvisionActionStatus> {
    if (action.outcome) return toStatus(action);
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
  const fallback: ProvisionNodeOutcome = result.exitCode === 0 ? 'succeeded' : 'failed';
  return Object.fromEntries(nodes.map((n) => [n, reported.get(n) ?? fallback]));
}

function toStatus(action: CommandAction): ProvisionActionStatus {
  return {
    name: action.name,
    action: action.action,
    status: action.outcome ? 'complete' : 'running',
    nodes: action.outcome ?? Object.fromEntries(action.nodes.map((n) => [n, 'running' as const])),
  };
}
