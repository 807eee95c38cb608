import { createHash } from 'node:crypto';
import type { Clock } from '../../../core/clock';
import { describeError, SiteServiceError } from '../../../core/errors';
import { validNodeName, validReason, validTemplate } from '../../../core/site/names';
import { drainClaim, isAdminDrain, isClaimOf } from '../../../core/site/node-claims';
import type { TaskType } from '../../../core/task-graph/graph-document';
import { CommandTransportError, type CommandTransport } from '../../../ports/command-transport';
import type { Site } from '../../../ports/site';
import type { RunningTask, TaskExecution, TaskExecutor, TaskInvocation, TaskOutcome } from '../../../ports/task-executor';
import { COMMAND_TASK_TYPES, headNodeCommands, nodeTaskCommand, nodeTaskOutcomes, taskScript } from './node-commands';

/** The head node's transport and how it reaches the nodes (the site profile's `tasks`). */
export interface TaskCommands {
  transport: CommandTransport;
  /** `pdsh -S -w {nodes} {command}`, `ssh -o BatchMode=yes {node} {command}`, ... */
  nodeExec: string;
  /** Nodes one `{nodes}` command reaches at most. */
  fanout: number;
}

export interface SiteTaskExecutorOptions {
  site: Pick<Site, 'workloadManager' | 'bootService' | 'nodeNames'>;
  /** Without it, command tasks (shell, puppet, upload_file, rsync) cannot run here. */
  commands?: TaskCommands;
  clock: Clock;
}

type Execution =
  /** A head-node command running the task on this node (maybe among others). */
  | { kind: 'command'; id: string; nodes: number }
  | { kind: 'drain' }
  /** adminDrain: the node is held by an admin's drain, left as it is (not resumed). */
  | { kind: 'resume'; adminDrain?: true }
  | { kind: 'reboot'; session: string };

/** How long past its timeout a head-node command may run: the node's `timeout` stops the task first, its status still has to come back. */
const COMMAND_GRACE_SECONDS = 60;

/**
 * Runs task-graph tasks on a site: shell, puppet, upload_file and rsync through the head node's
 * command transport and the node-exec form (alike tasks of one pass go out as one command over a
 * hostlist); reboot through the boot service (one boot session per task and node, named so that a
 * retried start meets it); drain and resume through the workload manager. Drains and resumes carry
 * the run's claim and `task=<id>` in their Slurm reason, so the operators (and the simulated site) see which run and task did it.
 */
export class SiteTaskExecutor implements TaskExecutor {
  constructor(private readonly options: SiteTaskExecutorOptions) {}

  unsupported(type: TaskType): string | undefined {
    if (COMMAND_TASK_TYPES.includes(type) && !this.options.commands) {
      return 'no command transport reaches the nodes: give the site profile a transport (`tasks.transport` or `transport`)';
    }
    return undefined;
  }

  async start(invocations: readonly TaskInvocation[]): Promise<Map<string, TaskExecution>> {
    const started = new Map<string, TaskExecution>();
    const commands = invocations.filter((i) => COMMAND_TASK_TYPES.includes(i.type));
    for (const [op, execution] of await this.startCommands(commands)) started.set(op, execution);
    for (const invocation of invocations) {
      if (COMMAND_TASK_TYPES.includes(invocation.type)) continue;
      started.set(invocation.op, await this.startSiteTask(invocation));
    }
    return started;
  }

  async poll(running: readonly RunningTask[]): Promise<Map<string, { outcome?: TaskOutcome; execution?: TaskExecution }>> {
    const seen = new Map<string, { outcome?: TaskOutcome }>();
    const byCommand = new Map<string, RunningTask[]>();
    for (const task of running) {
      const execution = task.execution as Execution;
      if (execution.kind === 'command') byCommand.set(execution.id, [...(byCommand.get(execution.id) ?? []), task]);
    }
    for (const [id, tasks] of byCommand) for (const [op, outcome] of await this.pollCommand(id, tasks)) seen.set(op, { outcome });
    const now = this.options.clock.now();
    for (const task of running) {
      const execution = task.execution as Execution;
      if (execution.kind === 'command') continue;
      const outcome = (await this.pollSiteTask(task, execution)) ?? timedOut(task, now);
      if (outcome) seen.set(task.invocation.op, { outcome });
    }
    return seen;
  }

  /** Alike tasks (same task, same parameters, same timeout) go to the head node together: one command per hostlist. */
  private async startCommands(invocations: readonly TaskInvocation[]): Promise<Map<string, TaskExecution>> {
    const commands = this.options.commands;
    const started = new Map<string, TaskExecution>();
    if (invocations.length === 0) return started;
    if (!commands) throw new SiteServiceError('head-node', `${invocations[0]!.type} tasks need a command transport, and this site has none`);
    const alike = new Map<string, TaskInvocation[]>();
    for (const invocation of invocations) {
      const key = JSON.stringify([invocation.task, invocation.type, invocation.timeoutSeconds, invocation.parameters]);
      alike.set(key, [...(alike.get(key) ?? []), invocation]);
    }
    for (const group of alike.values()) {
      const { task, type, parameters, timeoutSeconds } = group[0]!;
      const onNode = nodeTaskCommand(task, timeoutSeconds, taskScript(type, parameters));
      const hosts = await this.hostNames(group.map((i) => i.node));
      const opOf = new Map(group.map((invocation) => [hosts.get(invocation.node)!, invocation.op]));
      for (const { nodes, script } of headNodeCommands(
        commands.nodeExec,
        group.map((i) => hosts.get(i.node)!),
        onNode,
        commands.fanout,
      )) {
        let id: string;
        try {
          id = await commands.transport.start(script, { timeoutSeconds: timeoutSeconds + COMMAND_GRACE_SECONDS });
        } catch (err) {
          throw new SiteServiceError('head-node', `task ${task} on ${nodes.length} node(s): ${describeError(err)}`, undefined, { cause: err });
        }
        for (const node of nodes) started.set(opOf.get(node)!, { kind: 'command', id, nodes: nodes.length } satisfies Execution);
      }
    }
    return started;
  }

  private async pollCommand(id: string, tasks: readonly RunningTask[]): Promise<Map<string, TaskOutcome>> {
    const outcomes = new Map<string, TaskOutcome>();
    const timeoutSeconds = tasks[0]!.invocation.timeoutSeconds;
    let result;
    try {
      result = await this.options.commands!.transport.poll(id);
    } catch (err) {
      const status = err instanceof CommandTransportError ? err.details.status : undefined;
      // The transport gave up on the command (SSM TimedOut, Failed, Cancelled), or a local command's process is gone: the tasks end here.
      const ended = status !== undefined || (err instanceof CommandTransportError && err.details.transport === 'local');
      if (!ended) throw new SiteServiceError('head-node', `task command ${id}: ${describeError(err)}`, undefined, { cause: err });
      const outcome: TaskOutcome =
        status === 'TimedOut'
          ? { result: 'timeout', detail: `the head-node command outlived ${timeoutSeconds + COMMAND_GRACE_SECONDS} s` }
          : { result: 'failed', detail: describeError(err) };
      for (const task of tasks) outcomes.set(task.invocation.op, outcome);
      return outcomes;
    }
    if (!result) return outcomes;
    const hosts = await this.hostNames(tasks.map((t) => t.invocation.node));
    const byNode = nodeTaskOutcomes(
      tasks.map((t) => hosts.get(t.invocation.node)!),
      result,
      timeoutSeconds,
    );
    for (const task of tasks) outcomes.set(task.invocation.op, byNode.get(hosts.get(task.invocation.node)!)!);
    return outcomes;
  }

  /**
   * The names the head node reaches the nodes by: the workload manager's where the site maps names
   * (CSM: `pdsh -w nid[000001-000004]`, as CSM's own procedures do; a hostlist of nids stays short
   * where xnames would not), else the session's. A node the map does not know keeps its own name.
   */
  private async hostNames(nodes: readonly string[]): Promise<Map<string, string>> {
    const mapped = this.options.site.nodeNames ? await this.options.site.nodeNames.toWorkloadManager(nodes) : new Map<string, string>();
    return new Map(nodes.map((node) => [node, mapped.get(node) ?? node]));
  }

  private async startSiteTask(invocation: TaskInvocation): Promise<Execution> {
    const { site } = this.options;
    const node = validNodeName(invocation.node, 'node');
    switch (invocation.type) {
      case 'drain': {
        const reason = validReason(taskReason(invocation), `${invocation.task}.parameters.reason`);
        const found = (await site.workloadManager.getNodes([node])).get(node);
        // An admin's drain is kept, its reason byte for byte: the node counts as drained (as an upgrade counts it, README "An admin's drain is kept").
        if (found && isAdminDrain(found)) return { kind: 'drain' };
        // Drained by this very task already (a start retried after a later call of its batch failed): a second drain is not sent.
        if (found && found.flags.includes('DRAIN') && found.reason === reason) return { kind: 'drain' };
        await site.workloadManager.drain(node, reason);
        return { kind: 'drain' };
      }
      case 'resume': {
        const reason = validReason(taskReason(invocation), 'reason');
        // Only the run's own drain is lifted: a node an admin drained (before the run or since its drain) stays drained with the admin's reason.
        const found = (await site.workloadManager.getNodes([node])).get(node);
        if (found && isAdminDrain(found)) return { kind: 'resume', adminDrain: true };
        // Neither drained nor down: resumed already (a start retried after a later call of its batch failed); Slurm refuses a second RESUME ('Invalid node state specified').
        if (found && !found.flags.includes('DRAIN') && found.base !== 'DOWN') return { kind: 'resume' };
        await site.workloadManager.resume(node, reason);
        return { kind: 'resume' };
      }
      case 'reboot': {
        const template = invocation.parameters.template;
        if (typeof template !== 'string')
          throw new SiteServiceError('boot-service', `reboot task ${invocation.task} on ${node}: parameters.template (the boot template) is missing`);
        const session = bootSessionName(invocation);
        await site.bootService.createSession({
          name: session,
          operation: 'reboot',
          templateName: validTemplate(template, `${invocation.task}.parameters.template`),
          limit: { nodes: [node] },
        });
        return { kind: 'reboot', session };
      }
      default:
        throw new Error(`${invocation.type} tasks are not run by the site's services`);
    }
  }

  private async pollSiteTask(task: RunningTask, execution: Exclude<Execution, { kind: 'command' }>): Promise<TaskOutcome | undefined> {
    const { site } = this.options;
    const { node } = task.invocation;
    if (execution.kind === 'reboot') {
      const session = await site.bootService.getSession(execution.session);
      if (session?.error) return { result: 'failed', detail: `boot session ${execution.session}: ${session.error}` };
      const outcome = session?.nodes[node];
      if (outcome === 'succeeded') return { result: 'ok' };
      if (outcome === 'failed') return { result: 'failed', detail: `boot session ${execution.session} failed to boot the node` };
      return undefined;
    }
    const found = (await site.workloadManager.getNodes([node])).get(node);
    if (!found) return { result: 'failed', detail: 'the workload manager does not know the node' };
    const answers = found.base !== 'DOWN' && !found.flags.includes('NOT_RESPONDING');
    if (execution.kind === 'resume' && execution.adminDrain) return answers ? { result: 'ok' } : undefined;
    const drained = found.flags.includes('DRAIN');
    // A drain is done once the node runs no job; a resume once the drain is lifted and the node answers: a node whose slurmd
    // never registered after its reboot (`IDLE*`, later `DOWN*` `Not responding`) is not back, and its resume times out.
    if (execution.kind === 'drain') return drained && (found.base === 'IDLE' || found.base === 'DOWN') ? { result: 'ok' } : undefined;
    if (drained || !answers) return undefined;
    // Slurm 24.11 without accounting keeps the reason the resume carried (our claim): blanked, as the upgrade's are (stage-decision.ts claimsLeftInService).
    if (!found.flags.includes('FAIL') && found.base !== 'DOWN' && isClaimOf(found.reason, task.invocation.runId))
      await site.workloadManager.clearReasons([node]);
    return { result: 'ok' };
  }
}

/**
 * The Slurm reason of a drain or resume task: the run's claim (`rollout-task <run id>`,
 * core/site/node-claims.ts), the task's own reason if it gives one, and the task (`task=<id>`, last).
 */
function taskReason(invocation: TaskInvocation): string {
  const own = invocation.parameters.reason;
  return drainClaim('tasks', invocation.runId, `${typeof own === 'string' && own.trim() !== '' ? `${own.trim()} ` : ''}task=${invocation.task}`);
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * A reboot task's boot session: `t-<the run id's first 8 hex>-<task id in base32>-<8 hex of the run
 * and operation>`, a Kubernetes name as BOS wants, unique to the run and node (a retried start meets
 * it), naming its run and its task. Past BOS's 45 characters (task ids over ~15 characters) the BOS
 * connector shortens it.
 */
export function bootSessionName(invocation: Pick<TaskInvocation, 'task' | 'name' | 'runId'>): string {
  let bits = 0;
  let value = 0;
  let encoded = '';
  for (const byte of Buffer.from(invocation.task, 'utf8')) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      encoded += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) encoded += BASE32[(value << (5 - bits)) & 31];
  return `t-${invocation.runId.slice(0, 8)}-${encoded}-${createHash('sha256').update(invocation.name).digest('hex').slice(0, 8)}`;
}

/** The site's services have no timeout of their own for a drain or a boot: the task's timeout applies here. */
function timedOut(task: RunningTask, now: number): TaskOutcome | undefined {
  return now - task.startedAt >= task.invocation.timeoutSeconds * 1000
    ? { result: 'timeout', detail: `not done within ${task.invocation.timeoutSeconds} s` }
    : undefined;
}
