import { compressHostlist, expandHostlist } from '../../core/site/hostlist';
import type { NodeChangeLog } from './node-changes';
import { describeError } from '../../core/errors';
import type { CommandFault, SiteNode, SiteTiming } from '../site-file';
import { shellWords } from '../shell-words';
import type { Timeline } from '../timeline';
import type { InventoryNode } from '../../core/site/site-nodes';
import type { InventoryModel } from './inventory';
import type { ProvisionerModel } from './provisioner';
import { scontrolShowNodeJson } from './scontrol-json';
import { deleteReservation, putReservation, showReservations } from './scontrol-reservations';
import { SIMULATED_PARTITION, scontrolShowNodeText, sinfoJsonV38, sinfoLongFormat, type NodeFeatures } from './slurm-output';
import type { TaskLogEntry, TaskRunnerModel } from './task-runner';
import type { WorkloadManagerModel } from './workload-manager';
import { strigger } from './strigger';
import { TASK_EXIT_MARKER } from '../../core/site/task-exit-marker';
import { SsmNotificationsModel, type NotifiedCommand } from './ssm-notifications';

export { SIMULATED_PARTITION };

/** The instance id SSM knows the simulated head node by. */
export const HEAD_NODE_INSTANCE_ID = 'i-00000000000000001';
/** GetCommandInvocation's StandardOutputContent keeps this many characters, as in AWS. */
export const SSM_OUTPUT_LIMIT = 24_000;

export type InvocationStatus = 'InProgress' | 'Success' | 'Failed' | 'TimedOut';

export interface Invocation {
  commandId: string;
  instanceId: string;
  commandLine: string;
  /** SendCommand's Comment: what ListCommandInvocations finds a command by. */
  comment?: string;
  requestedAt: number;
  /** Simulated time the command finishes (Infinity: never, until executionTimeout). */
  doneAt: number;
  timeoutAt: number;
  exitCode: number;
  stdout: string;
  stderr: string;
  polls: number;
  /** A command that runs in simulated time (`provision`): its output once finished, undefined before. */
  pending?: () => Output | undefined;
  /** The status its end was notified with (SSM's status-change notifications, while someone listens): Get sees it from then. */
  announced?: InvocationStatus;
}

/** What SendCommand records of a command when it is accepted (AWS-RunShellScript's parameters, the Comment); `running`: it ends later (the local agent runs it in a shell), else its result is filled in now. */
export function acceptedInvocation(fields: {
  commandId: string;
  instanceId: string;
  commands: readonly string[];
  executionTimeoutSeconds: number;
  comment: string | undefined;
  now: number;
  running: boolean;
}): Invocation {
  const { commandId, instanceId, commands, executionTimeoutSeconds, comment, now, running } = fields;
  return {
    commandId,
    instanceId,
    commandLine: commands.join('\n'),
    ...(comment !== undefined ? { comment } : {}),
    requestedAt: now,
    doneAt: running ? Infinity : now,
    timeoutAt: now + executionTimeoutSeconds * 1000,
    exitCode: running ? -1 : 0,
    stdout: '',
    stderr: '',
    polls: 0,
  };
}

export interface HeadNodeDeps {
  workloadManager: WorkloadManagerModel;
  /** What `provision prepare|deploy <hostlist>` drives. */
  provisioner: ProvisionerModel;
  /** What task-graph commands run on the nodes through `pdsh` or `ssh` drive. */
  tasks: TaskRunnerModel;
  /** Node features are read from and written to the inventory's groups (see `features`). */
  inventory: InventoryModel;
  timing: Pick<SiteTiming, 'bootSeconds' | 'returnSeconds' | 'healthCheckSeconds'>;
  nodes: readonly Pick<SiteNode, 'name' | 'faults'>[];
  commandFaults: readonly CommandFault[];
  timeline: Timeline;
  violations: string[];
  /** The name Slurm knows a host by, for one ssh reaches by another (a CSM node's xname: its nid name). */
  slurmHostName?: (host: string) => string;
  /** The site's name of a host Slurm names (a CSM node's nid name: its xname), which the task log keeps. */
  siteHostName?: (host: string) => string;
  /** Where every `scontrol reboot` is logged with the run the node's reason names. */
  changes?: NodeChangeLog;
}

export interface Output {
  exitCode: number;
  stdout?: string;
  stderr?: string;
  /** The command goes on in simulated time: its output once it finished. */
  pending?: () => Output | undefined;
  /** The command takes this long (simulated seconds), its output known from the start: shown once it ended. */
  seconds?: number;
}

/**
 * A Slurm head node reached through SSM Run Command: runs the commands the command connectors send
 * (`scontrol update|reboot|show node|reconfigure`, `sinfo`, `squeue`, `sbatch`, `scancel`, `wwctl
 * node set`, `nodeset`) against the site models, as the site's Slurm release prints them (the site
 * file's `slurm.version`: 22.05 has no `scontrol --json`). Anything else exits 127, as a shell
 * answers an unknown command.
 *
 * Slurm's view of the inventory: one partition `batch` with every node; a node's features are
 * `rack:<rack>`, `role:<role>`, `<key>:<value>` for its labels, its tags, and the label
 * of every site-file group it is in. Setting a node's features edits those groups (a new feature
 * label makes a group), so the HSM and Slurm views of one simulated site always agree. As in Slurm,
 * features set with `scontrol update` last until slurmctld reads slurm.conf again (`scontrol
 * reconfigure`, a restart): then the group edits they made are undone.
 */
export class HeadNodeModel {
  private readonly invocations = new Map<string, Invocation>();
  private readonly bootCounts = new Map<string, number>();
  private readonly rebooting = new Set<string>();
  private readonly faultSeen: number[];
  private readonly nodeFaults: Map<string, SiteNode['faults']>;
  /** Node → image selected by the last prepare command (wwctl / nodeset). */
  readonly images = new Map<string, string>();
  /** Every command line run, in order: what a test asserts reached the head node. */
  readonly commandLog: string[] = [];
  /** `ssh <node> nhc` runs per node: the health checks the site saw. */
  readonly healthChecks = new Map<string, number>();
  /** SSM's status-change notifications of the commands sent here (to EventBridge), while someone listens. */
  readonly ssmNotifications: SsmNotificationsModel;
  private nextId = 1;
  private provisionRuns = 0;
  /** Per node, what `scontrol update` changed of its features since slurmctld last read slurm.conf. */
  private readonly featureEdits = new Map<string, { added: Set<string>; removed: Set<string>; active?: string[] }>();

  constructor(private readonly deps: HeadNodeDeps) {
    this.faultSeen = deps.commandFaults.map(() => 0);
    this.nodeFaults = new Map(deps.nodes.map((n) => [n.name, n.faults]));
    this.ssmNotifications = new SsmNotificationsModel(deps.timeline);
    deps.workloadManager.setRebootProgram((name) => this.rebootProgram(name));
  }

  bootCount(node: string): number {
    return this.bootCounts.get(node) ?? 0;
  }

  /** SendCommand: the command runs now; its result shows once simulated time reaches `doneAt`. Its status changes are notified (announce). */
  send(instanceId: string, commands: readonly string[], executionTimeoutSeconds: number, comment?: string): Invocation {
    const invocation = this.accept(instanceId, commands, executionTimeoutSeconds, comment);
    this.announce(invocation);
    return invocation;
  }

  private accept(instanceId: string, commands: readonly string[], executionTimeoutSeconds: number, comment?: string): Invocation {
    const now = this.deps.timeline.sync();
    const commandId = `${String(this.nextId++).padStart(8, '0')}-0000-4000-8000-000000000000`;
    const invocation = acceptedInvocation({ commandId, instanceId, commands, executionTimeoutSeconds, comment, now, running: false });
    const { commandLine } = invocation;
    this.invocations.set(commandId, invocation);
    this.commandLog.push(commandLine);
    const fault = this.matchFault(commandLine);
    if (fault?.hang) {
      invocation.doneAt = Infinity;
      return invocation;
    }
    if (fault?.exitCode) {
      Object.assign(invocation, { exitCode: fault.exitCode, stderr: fault.stderr });
      return invocation;
    }
    let out: Output;
    try {
      out = this.execute(commands);
    } catch (err) {
      out = { exitCode: 1, stderr: describeError(err) };
    }
    if (out.pending) {
      invocation.pending = out.pending;
      invocation.doneAt = Infinity;
      return invocation;
    }
    Object.assign(invocation, { exitCode: out.exitCode, stdout: out.stdout ?? '', stderr: out.stderr ?? '', doneAt: now + (out.seconds ?? 0) * 1000 });
    return invocation;
  }

  /**
   * SSM's notifications of a command just sent (while someone listens): InProgress now, then its end when it
   * comes: at `doneAt` when known, else at its execution timeout (TimedOut) or when a read sees a command running
   * in simulated time end (`pending`: its end has no time of its own).
   */
  private announce(invocation: Invocation): void {
    const notifications = this.ssmNotifications;
    if (!notifications.listening) return;
    notifications.statusChanged(notified(invocation), 'InProgress');
    // One look at its end: when it is done, or at its timeout when it runs past it (or its end has no time).
    notifications.schedule(Math.min(invocation.doneAt, invocation.timeoutAt), () => this.announceEnd(invocation));
  }

  /** The command's end, notified once, when it ended. */
  private announceEnd(invocation: Invocation): void {
    if (invocation.announced || !this.ssmNotifications.listening) return;
    const status = this.peek(invocation);
    if (status === 'InProgress') return;
    invocation.announced = status;
    this.ssmNotifications.statusChanged(notified(invocation), status);
  }

  /** GetCommandInvocation: InProgress on the first poll and until done; TimedOut past executionTimeout. */
  get(commandId: string, instanceId: string): { invocation: Invocation; status: InvocationStatus } | undefined {
    const now = this.deps.timeline.sync();
    const invocation = this.invocations.get(commandId);
    if (!invocation || invocation.instanceId !== instanceId) return undefined;
    invocation.polls++;
    const finished = invocation.pending?.();
    if (finished && now < invocation.timeoutAt) {
      Object.assign(invocation, { exitCode: finished.exitCode, stdout: finished.stdout ?? '', stderr: finished.stderr ?? '', doneAt: now, pending: undefined });
    }
    // A command running in simulated time whose end this read saw: notified now.
    if (finished) this.announceEnd(invocation);
    if (now >= invocation.timeoutAt && invocation.doneAt > invocation.timeoutAt) return { invocation, status: 'TimedOut' };
    // Right after SendCommand an invocation may look InProgress though done; not once its end was notified.
    if ((invocation.polls === 1 && !invocation.announced) || now < invocation.doneAt) return { invocation, status: 'InProgress' };
    return { invocation, status: invocation.exitCode === 0 ? 'Success' : 'Failed' };
  }

  /** An invocation's status without counting a poll (ListCommandInvocations). */
  peek(invocation: Invocation): InvocationStatus {
    const now = this.deps.timeline.sync();
    // A command that would end past its executionTimeout ends TimedOut there (as get says).
    if (now >= invocation.timeoutAt && invocation.doneAt > invocation.timeoutAt) return 'TimedOut';
    if (invocation.pending === undefined && now >= invocation.doneAt) return invocation.exitCode === 0 ? 'Success' : 'Failed';
    return 'InProgress';
  }

  list(commandId?: string): Invocation[] {
    this.deps.timeline.sync();
    return [...this.invocations.values()].filter((i) => commandId === undefined || i.commandId === commandId);
  }

  private matchFault(commandLine: string): CommandFault | undefined {
    let hit: CommandFault | undefined;
    this.deps.commandFaults.forEach((fault, i) => {
      if (!commandLine.includes(fault.match)) return;
      const seen = ++this.faultSeen[i]!;
      if (hit === undefined && seen > fault.afterCalls && seen <= fault.afterCalls + fault.count) hit = fault;
    });
    return hit;
  }

  private execute(commands: readonly string[]): Output {
    let last: Output = { exitCode: 0 };
    let stdout = '';
    let stderr = '';
    let seconds = 0;
    // A script's lines run in turn and the first failure ends it: `set -e` (what the reservation connector asks for) is how the simulator runs every script.
    for (const line of commands.flatMap((c) => c.split('\n'))) {
      if (line.trim() === 'set -e') continue;
      const argv = shellWords(line);
      if (argv === undefined) return { exitCode: 127, stdout, stderr: `${stderr}sim-head-node: unsupported shell syntax in: ${line}\n` };
      if (argv.length === 0) continue;
      last = this.run(argv);
      if (last.pending) return last;
      stdout += last.stdout ?? '';
      stderr += last.stderr ?? '';
      seconds += last.seconds ?? 0;
      if (last.exitCode !== 0) break;
    }
    return { exitCode: last.exitCode, stdout, stderr, ...(seconds > 0 ? { seconds } : {}) };
  }

  private run(argv: string[], env: ReadonlyMap<string, string> = new Map()): Output {
    const [program, ...args] = argv;
    const base = program!.split('/').pop();
    // `env NAME=value... command`: what the connectors use to set SLURM_TIME_FORMAT.
    if (base === 'env') {
      const assignments = new Map(env);
      let i = 0;
      for (; i < args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i]!); i++)
        assignments.set(args[i]!.slice(0, args[i]!.indexOf('=')), args[i]!.slice(args[i]!.indexOf('=') + 1));
      if (i === args.length) return { exitCode: 0, stdout: [...assignments].map(([k, v]) => `${k}=${v}\n`).join('') };
      return this.run(args.slice(i), assignments);
    }
    if (base === 'scontrol') return this.scontrol(args, env);
    if (base === 'wwctl' && args[0] === 'node' && args[1] === 'set') return this.wwctl(args.slice(2));
    if (base === 'nodeset') return this.nodeset(args);
    if (base === 'sinfo') return this.sinfo(args);
    if (base === 'squeue') return this.squeue(args);
    if (base === 'sbatch') return this.sbatch(args);
    if (base === 'scancel') return this.scancel(args);
    if (base === 'strigger') return strigger(this.deps.workloadManager.triggers, args);
    if (base === 'provision') return this.provision(args);
    if (base === 'pdsh') return this.pdsh(args);
    if (base === 'ssh') return this.ssh(args);
    return { exitCode: 127, stderr: `sh: ${program}: command not found\n` };
  }

  private scontrol(args: string[], env: ReadonlyMap<string, string> = new Map()): Output {
    const version = this.deps.workloadManager.version;
    let json = false;
    let oneLiner = false;
    let i = 0;
    for (; i < args.length && args[i]!.startsWith('-'); i++) {
      const option = args[i]!;
      if (option === '--version' || option === '-V') return { exitCode: 0, stdout: `slurm ${version.full}\n` };
      if (option === '--json' && version.scontrolJson) json = true;
      else if (option === '-o' || option === '--oneliner') oneLiner = true;
      else return { exitCode: 1, stderr: `scontrol: unrecognized option '${option}'\nTry "scontrol --help" for more information\n` };
    }
    const [verb, ...more] = args.slice(i);
    if (verb === 'show' && (more[0] === 'node' || more[0] === 'nodes'))
      return this.showNodes(more[1], json, oneLiner, env.get('SLURM_TIME_FORMAT') === '%s' ? 'epoch' : 'iso');
    const now = () => this.deps.timeline.sync();
    const wlm = this.deps.workloadManager;
    if (verb === 'show' && (more[0] === 'reservation' || more[0] === 'reservations' || more[0] === 'res'))
      return showReservations(wlm, more[1], oneLiner, env.get('SLURM_TIME_FORMAT') === '%s', now());
    if (verb === 'create' && (more[0] === 'reservation' || more[0] === 'res')) return putReservation(wlm, more.slice(1), 'create', now());
    if (verb === 'update' && /^reservation(name)?=/i.test(more[0] ?? '')) return putReservation(wlm, more, 'update', now());
    if (verb === 'delete' && /^reservation(name)?=/i.test(more[0] ?? '')) return deleteReservation(wlm, more);
    if (verb === 'update') return this.update(more);
    if (verb === 'reboot' || verb === 'reboot_nodes') return this.reboot(more);
    if (verb === 'reconfigure' || verb === 'reconfig') {
      this.readSlurmConf();
      return { exitCode: 0 };
    }
    return { exitCode: 1, stderr: `scontrol: unsupported command: ${args.join(' ')}\n` };
  }

  /** `scontrol [--json|-o] show node [hostlist]`: the nodes found; `Node <name> not found` and exit 1 for any other. */
  private showNodes(hostlist: string | undefined, json: boolean, oneLiner: boolean, timeFormat: 'iso' | 'epoch'): Output {
    const wlm = this.deps.workloadManager;
    const names = hostlist === undefined ? undefined : expandHostlist(hostlist);
    const nodes = names === undefined ? wlm.list() : names.flatMap((n) => wlm.get(n) ?? []);
    const missing = names === undefined ? [] : names.filter((n) => !wlm.get(n));
    const now = this.deps.timeline.sync();
    const featuresOf = this.featuresReader();
    if (json) {
      if (nodes.length === 0)
        return { exitCode: 1, stdout: JSON.stringify({ nodes: [], errors: [{ error: 'Node not found' }] }), stderr: `Node ${hostlist} not found\n` };
      return { exitCode: 0, stdout: scontrolShowNodeJson(nodes, featuresOf, now, wlm.version) };
    }
    const text = scontrolShowNodeText(nodes, featuresOf, wlm.version, now, oneLiner, timeFormat);
    return { exitCode: missing.length > 0 ? 1 : 0, stdout: text + missing.map((n) => `Node ${n} not found\n`).join('') };
  }

  private keyValues(args: readonly string[]): Map<string, string> {
    const pairs = new Map<string, string>();
    for (const arg of args) {
      const eq = arg.indexOf('=');
      if (eq <= 0) throw new Error(`scontrol: invalid argument '${arg}'`);
      pairs.set(arg.slice(0, eq).toLowerCase(), arg.slice(eq + 1));
    }
    return pairs;
  }

  /** The nodes of a hostlist; undefined when one is unknown to slurmctld (it refuses the whole request). */
  private nodesOf(hostlist: string | undefined): string[] | undefined {
    if (!hostlist) return undefined;
    const names = expandHostlist(hostlist);
    return names.some((n) => !this.deps.workloadManager.get(n)) ? undefined : names;
  }

  /** `scontrol update NodeName=<hostlist> State=DRAIN|FAIL|DOWN|RESUME [Reason=...]` or feature edits, with scontrol's own messages (src/scontrol/update_node.c). */
  private update(args: readonly string[]): Output {
    const kv = this.keyValues(args);
    const names = this.nodesOf(kv.get('nodename'));
    if (!names) return { exitCode: 1, stderr: 'slurm_update error: Invalid node name specified\n' };
    const available = kv.get('availablefeatures') ?? kv.get('features');
    const active = kv.get('activefeatures');
    if (available !== undefined || active !== undefined) return this.setFeatures(names, available, active);
    const state = kv.get('state')?.toUpperCase();
    const reason = scontrolReasonValue(kv.get('reason'));
    const wlm = this.deps.workloadManager;
    if (state === undefined && reason !== undefined) {
      // The reason alone (update_node.c sends it as given; slurmctld ignores an empty one).
      for (const name of names) wlm.setReason(name, reason);
      return { exitCode: 0 };
    }
    if ((state === 'DRAIN' || state === 'FAIL' || state === 'DOWN') && !reason?.trim())
      return { exitCode: 1, stderr: 'You must specify a reason when DOWNING or DRAINING a node. Request denied\n' };
    if (state !== 'DRAIN' && state !== 'FAIL' && state !== 'DOWN' && state !== 'RESUME')
      return { exitCode: 1, stderr: `scontrol: unsupported State=${state ?? ''} (the simulator does DRAIN, FAIL, DOWN, RESUME)\n` };
    let invalid = false;
    for (const name of names) {
      if (state === 'DRAIN') wlm.drain(name, reason!);
      else if (state === 'FAIL') wlm.fail(name, reason!);
      else if (state === 'DOWN') wlm.down(name, reason!);
      else {
        try {
          wlm.resume(name, reason);
        } catch {
          // slurmctld updates the nodes it can and answers with the error.
          invalid = true;
        }
      }
    }
    return invalid ? { exitCode: 1, stderr: 'slurm_update error: Invalid node state specified\n' } : { exitCode: 0 };
  }

  /** `scontrol reboot [ASAP] [nextstate=RESUME|DOWN] [reason=...] <hostlist>` (src/scontrol/scontrol.c): slurmctld does the rest (workload-manager.ts). */
  private reboot(args: string[]): Output {
    const asap = args[0]?.toUpperCase() === 'ASAP';
    const rest = asap ? args.slice(1) : [...args];
    const hostlist = rest.at(-1)?.includes('=') ? undefined : rest.pop();
    const kv = this.keyValues(rest);
    const nextState = kv.get('nextstate')?.toUpperCase();
    if (nextState !== undefined && nextState !== 'RESUME' && nextState !== 'DOWN')
      return { exitCode: 1, stderr: `Invalid state: ${kv.get('nextstate')}\nValid states: DOWN, RESUME\n` };
    const names = this.nodesOf(hostlist);
    if (!names) return { exitCode: 1, stderr: 'scontrol_reboot_nodes error: Invalid node name specified\n' };
    const wlm = this.deps.workloadManager;
    const reason = kv.get('reason');
    for (const name of names)
      wlm.requestReboot(name, { asap, ...(nextState ? { nextState: nextState as 'RESUME' | 'DOWN' } : {}), ...(reason ? { reason } : {}) });
    return { exitCode: 0 };
  }

  /**
   * The RebootProgram stand-in: runs on the node once slurmctld issued its reboot. The node goes down
   * and, after bootSeconds + returnSeconds, its slurmd registers; one that fails to boot or never
   * returns is left to ResumeTimeout.
   */
  private rebootProgram(name: string): void {
    const { workloadManager: wlm, timeline } = this.deps;
    const now = timeline.sync();
    if (this.rebooting.has(name)) this.deps.violations.push(`${new Date(now).toISOString()} node ${name} rebooted by scontrol while still rebooting`);
    this.rebooting.add(name);
    this.bootCounts.set(name, this.bootCount(name) + 1);
    this.deps.changes?.byNodeReason(now, name, 'boot', wlm.get(name)?.reason);
    const generation = wlm.reboot(name);
    const faults: Partial<SiteNode['faults']> = this.nodeFaults.get(name) ?? {};
    if (faults.boot === 'hang' || faults.returnToService === 'never') return;
    const { bootSeconds, returnSeconds } = this.deps.timing;
    if (faults.boot === 'fail') {
      timeline.at(now + bootSeconds * 1000, () => this.rebooting.delete(name));
      return;
    }
    timeline.at(now + (bootSeconds + returnSeconds) * 1000, () => {
      this.rebooting.delete(name);
      wlm.register(name, generation);
    });
  }

  /** slurmctld read slurm.conf again (`scontrol reconfigure`, a restart): features set by `scontrol update` are gone. */
  private readSlurmConf(): void {
    const inventory = this.deps.inventory;
    for (const [name, edit] of this.featureEdits) {
      for (const label of edit.added) if (inventory.hasGroup(label) && inventory.getGroup(label).members.includes(name)) inventory.removeMember(label, name);
      for (const label of edit.removed) {
        if (!inventory.hasGroup(label)) inventory.createGroup(label);
        if (!inventory.getGroup(label).members.includes(name)) inventory.addMember(label, name);
      }
    }
    this.featureEdits.clear();
  }

  /** slurmctld restarts (`systemctl restart slurmctld`): node states survive in its state file, features come from slurm.conf. */
  restartController(): void {
    this.readSlurmConf();
  }

  /** Every node's features: the fixed ones from the site file, then its groups' labels. */
  features(): Map<string, string[]> {
    const inventory = this.deps.inventory;
    const features = new Map(inventory.listNodes().map((node) => [node.name, fixedFeatures(node)]));
    for (const group of inventory.listGroups()) for (const member of group.members) features.get(member)?.push(group.label);
    return features;
  }

  /** The features of many nodes, the site's groups read once (a listing of 10,000 nodes read them once per node: quadratic). */
  featuresReader(): (name: string) => NodeFeatures {
    const all = this.features();
    return (name) => this.nodeFeatures(name, all);
  }

  /** A node's AvailableFeatures (its fixed features and groups) and ActiveFeatures (the same, unless `scontrol update` set them apart). */
  nodeFeatures(name: string, all: ReadonlyMap<string, string[]> = this.features()): NodeFeatures {
    const available = all.get(name) ?? [];
    const active = this.featureEdits.get(name)?.active;
    return { available, active: active ? active.filter((f) => available.includes(f)) : available };
  }

  /**
   * `scontrol update NodeName=<hostlist> [AvailableFeatures=<list>] [ActiveFeatures=<list>]`: group
   * features become group memberships; the active ones must stay a subset of the available ones
   * (node_mgr.c _valid_features_act), else nothing changes.
   */
  private setFeatures(names: readonly string[], available: string | undefined, active: string | undefined): Output {
    const list = (value: string) => value.split(',').filter(Boolean);
    for (const name of names) {
      const current = this.nodeFeatures(name);
      const wanted = available === undefined ? [...current.available] : list(available);
      const wantedActive = active === undefined ? [...current.active] : list(active);
      if (wantedActive.some((f) => !wanted.includes(f)))
        return { exitCode: 1, stderr: 'slurm_update error: Active features not subset of available features\n' };
    }
    const inventory = this.deps.inventory;
    const nodes = new Map(inventory.listNodes().map((n) => [n.name, n]));
    for (const name of names) {
      const current = this.nodeFeatures(name);
      const wanted = available === undefined ? [...current.available] : list(available);
      const wantedActive = active === undefined ? [...current.active] : list(active);
      const fixed = fixedFeatures(nodes.get(name)!);
      const lost = fixed.filter((f) => !wanted.includes(f));
      if (lost.length > 0) return { exitCode: 1, stderr: `sim-head-node: removing site-file features (${lost.join(',')}) is not simulated\n` };
      const edit = this.featureEdits.get(name) ?? { added: new Set<string>(), removed: new Set<string>() };
      const groups = new Set(wanted.filter((f) => !fixed.includes(f)));
      for (const group of inventory.listGroups()) {
        if (group.members.includes(name) && !groups.has(group.label)) {
          inventory.removeMember(group.label, name);
          if (!edit.added.delete(group.label)) edit.removed.add(group.label);
        }
      }
      for (const label of groups) {
        if (!inventory.hasGroup(label)) inventory.createGroup(label);
        if (!inventory.getGroup(label).members.includes(name)) {
          inventory.addMember(label, name);
          if (!edit.removed.delete(label)) edit.added.add(label);
        }
      }
      const sameAsAvailable = wantedActive.length === wanted.length && wanted.every((f) => wantedActive.includes(f));
      if (sameAsAvailable) delete edit.active;
      else edit.active = wantedActive;
      this.featureEdits.set(name, edit);
    }
    return { exitCode: 0 };
  }

  /**
   * `sinfo --noheader [--nodes=<hostlist>] --format=<fmt>` with %R (partition), %f (available
   * features), %N (hostlist): like sinfo, one line per distinct value of the other fields.
   */
  private sinfo(args: string[]): Output {
    if (args.includes('--json')) return this.sinfoJson(args);
    const long = args.indexOf('-O') >= 0 ? args[args.indexOf('-O') + 1] : args.find((a) => a.startsWith('--Format='))?.slice('--Format='.length);
    if (long !== undefined) return this.sinfoLong(args, long);
    const format = args.find((a) => a.startsWith('--format='))?.slice('--format='.length) ?? args[args.indexOf('-o') + 1];
    const nodesArg = args.find((a) => a.startsWith('--nodes='))?.slice('--nodes='.length);
    const known = new Set(['--noheader', '-h']);
    if (!format || args.some((a) => !known.has(a) && !a.startsWith('--format=') && !a.startsWith('--nodes=') && a !== '-o' && a !== format)) {
      return { exitCode: 1, stderr: `sinfo: unsupported arguments: ${args.join(' ')}\n` };
    }
    const wanted = nodesArg === undefined ? undefined : new Set(expandHostlist(nodesArg));
    const records = new Map<string, string[]>();
    const all = this.features();
    for (const node of this.deps.workloadManager.list()) {
      if (wanted && !wanted.has(node.name)) continue;
      const features = (all.get(node.name) ?? []).join(',') || '(null)';
      const key = format.replace(/%([RPfb])/g, (_, field: string) => (field === 'R' || field === 'P' ? SIMULATED_PARTITION : features));
      const line = records.get(key);
      if (line) line.push(node.name);
      else records.set(key, [node.name]);
    }
    const lines = [...records].map(([line, nodes]) => line.replace(/%N/g, compressHostlist(nodes)));
    return { exitCode: 0, stdout: lines.map((l) => `${l}\n`).join('') };
  }

  /** `sinfo -h -N [-n <hostlist>] -O <fields>`: one line per node asked that Slurm knows (an unknown name is just absent). */
  private sinfoLong(args: string[], format: string): Output {
    let hostlist: string | undefined;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]!;
      if (arg === '-h' || arg === '--noheader' || arg === '-N' || arg === '--Node') continue;
      if (arg === '-O' || arg === '-n' || arg === '--nodes') {
        if (arg !== '-O') hostlist = args[i + 1];
        i++;
      } else if (arg.startsWith('--nodes=')) hostlist = arg.slice('--nodes='.length);
      else if (!arg.startsWith('--Format=')) return { exitCode: 1, stderr: `sinfo: unsupported arguments: ${args.join(' ')}\n` };
    }
    if (!args.includes('-N') && !args.includes('--Node')) return { exitCode: 1, stderr: 'sim-head-node: sinfo -O is simulated node by node (-N) only\n' };
    const wanted = hostlist === undefined ? undefined : new Set(expandHostlist(hostlist));
    const nodes = this.deps.workloadManager.list().filter((n) => !wanted || wanted.has(n.name));
    const stdout = sinfoLongFormat(nodes, this.featuresReader(), format);
    return stdout === undefined
      ? { exitCode: 1, stderr: `sim-head-node: sinfo -O ${format}: a field the simulator does not print\n` }
      : { exitCode: 0, stdout };
  }

  /**
   * `sinfo --json [-n <hostlist>]` as 22.05 prints it: openapi v0.0.38's shape, every node whatever
   * `-n` says. Later releases print data_parser shapes grouped by partition, which is not simulated.
   */
  private sinfoJson(args: string[]): Output {
    const wlm = this.deps.workloadManager;
    if (!wlm.version.sinfoJsonIsV38)
      return {
        exitCode: 1,
        stderr: `sim-head-node: sinfo --json is simulated for Slurm 22.05 only (this site runs ${wlm.version.full}); use scontrol --json show node\n`,
      };
    const known = (a: string, i: number) =>
      a === '--json' || a === '-N' || a === '-h' || a === '--noheader' || a.startsWith('--nodes=') || a === '-n' || args[i - 1] === '-n';
    if (!args.every(known)) return { exitCode: 1, stderr: `sinfo: unsupported arguments: ${args.join(' ')}\n` };
    return { exitCode: 0, stdout: sinfoJsonV38(wlm.list(), this.featuresReader(), wlm.version) };
  }

  /**
   * `sbatch [--parsable] -w <node> [-t <minutes>] [-J name] [-D dir] [-o file] --wrap 'sleep <seconds>'`:
   * a job that runs at once on a node that can take it (the simulator has no queue), ending after its
   * sleep or its time limit.
   */
  private sbatch(args: string[]): Output {
    let node: string | undefined;
    let wrap: string | undefined;
    let limitMinutes = Infinity;
    let parsable = false;
    const valueOf = (i: number) => (args[i]!.includes('=') ? args[i]!.slice(args[i]!.indexOf('=') + 1) : args[i + 1]);
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]!;
      const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
      const inline = arg.includes('=');
      if (name === '--parsable') parsable = true;
      else if (['-w', '--nodelist', '-t', '--time', '-J', '--job-name', '-D', '--chdir', '-o', '--output', '--wrap'].includes(name)) {
        const value = valueOf(i);
        if (!inline) i++;
        if (value === undefined) return { exitCode: 1, stderr: `sbatch: option ${name} needs a value\n` };
        if (name === '-w' || name === '--nodelist') node = value;
        else if (name === '-t' || name === '--time') limitMinutes = Number(value);
        else if (name === '--wrap') wrap = value;
      } else return { exitCode: 1, stderr: `sbatch: unsupported argument ${arg}\n` };
    }
    const sleep = /^sleep (\d+(\.\d+)?)$/.exec(wrap?.trim() ?? '');
    if (!node || !sleep || Number.isNaN(limitMinutes) || limitMinutes <= 0)
      return { exitCode: 1, stderr: "sim-head-node: only `sbatch -w <node> [-t <minutes>] --wrap 'sleep <seconds>'` is simulated\n" };
    const names = this.nodesOf(node);
    if (!names || names.length !== 1) return { exitCode: 1, stderr: 'sbatch: error: Batch job submission failed: Invalid node name specified\n' };
    const seconds = Math.min(Number(sleep[1]), limitMinutes * 60);
    const jobId = this.deps.workloadManager.submitJob(names[0]!, seconds);
    return { exitCode: 0, stdout: parsable ? `${jobId}\n` : `Submitted batch job ${jobId}\n` };
  }

  /** `scancel <job id>...` */
  private scancel(args: string[]): Output {
    if (args.length === 0 || args.some((a) => !/^\d+$/.test(a))) return { exitCode: 1, stderr: 'sim-head-node: only `scancel <job id>...` is simulated\n' };
    for (const id of args) this.deps.workloadManager.cancelJob(Number(id));
    return { exitCode: 0 };
  }

  /** `squeue -h -t RUNNING -w <hostlist> -o '%N %L'`: each running job's nodes and time left (the only form the connectors use). */
  private squeue(args: string[]): Output {
    const [h, t, state, w, hostlist, o, format] = args;
    if (args.length !== 7 || h !== '-h' || t !== '-t' || state !== 'RUNNING' || w !== '-w' || o !== '-o' || format !== '%N %L' || !hostlist) {
      return { exitCode: 1, stderr: `squeue: unsupported arguments: ${args.join(' ')}\n` };
    }
    const wanted = new Set(expandHostlist(hostlist));
    const now = this.deps.timeline.sync();
    const lines = this.deps.workloadManager
      .runningJobs()
      .filter((job) => wanted.has(job.node))
      .map((job) => `${job.node} ${Number.isFinite(job.endsAt) ? timeLeft(Math.floor((job.endsAt - now) / 1000)) : 'UNLIMITED'}\n`);
    return { exitCode: 0, stdout: lines.join('') };
  }

  /**
   * `provision prepare|deploy <hostlist>`: the site's own provisioning script, as the command
   * provisioner's template in a `--transport ssm` profile names it. Runs a provisioner-model action
   * and finishes when every node has; prints `node=<hostlist> ok` and `node=<hostlist> failed`, exits 1 if any failed.
   */
  private provision(args: string[]): Output {
    const [kind, hostlist] = args;
    if ((kind !== 'prepare' && kind !== 'deploy') || !hostlist || args.length !== 2)
      return { exitCode: 2, stderr: 'provision: usage: provision prepare|deploy HOSTLIST\n' };
    const name = `head-node-${++this.provisionRuns}`;
    this.deps.provisioner.startAction({ name, action: kind, nodes: expandHostlist(hostlist) });
    return {
      exitCode: 0,
      pending: () => {
        const action = this.deps.provisioner.getAction(name)!;
        if (action.status !== 'complete') return undefined;
        const nodes = Object.entries(action.nodes);
        const ok = nodes.filter(([, outcome]) => outcome === 'succeeded').map(([node]) => node);
        const failed = nodes.filter(([, outcome]) => outcome !== 'succeeded').map(([node]) => node);
        const lines = [
          ...(ok.length > 0 ? [`node=${compressHostlist(ok)} ok\n`] : []),
          ...(failed.length > 0 ? [`node=${compressHostlist(failed)} failed\n`] : []),
        ];
        return { exitCode: failed.length > 0 ? 1 : 0, stdout: lines.join('') };
      },
    };
  }

  /**
   * `pdsh [-S] [-f N] [-R rcmd] [-l user] [-t s] [-u s] -w HOSTLIST COMMAND...`: the command on every
   * node of the hostlist at once; each output line prefixed `node: `, as pdsh prints it. `-S` exits
   * with the largest remote exit code.
   */
  private pdsh(args: string[]): Output {
    let hostlist: string | undefined;
    let largest = false;
    let i = 0;
    for (; i < args.length && args[i]!.startsWith('-'); i++) {
      const option = args[i]!;
      if (option === '-S') largest = true;
      else if (option === '-w') hostlist = args[++i];
      else if (['-f', '-R', '-l', '-t', '-u'].includes(option)) i++;
      else return { exitCode: 1, stderr: `pdsh: unsupported option ${option}\n` };
    }
    if (!hostlist || i >= args.length) return { exitCode: 1, stderr: 'pdsh: usage: pdsh -w HOSTLIST COMMAND\n' };
    const runs = expandHostlist(hostlist).map((node) => ({ node, run: this.onNode(node, args.slice(i).join(' ')) }));
    return {
      exitCode: 0,
      pending: () => {
        const outputs = runs.map(({ node, run }) => ({ node, output: run() }));
        if (outputs.some(({ output }) => output === undefined)) return undefined;
        const codes = outputs.map(({ output }) => output!.exitCode);
        return {
          exitCode: largest ? Math.max(0, ...codes) : 0,
          stdout: outputs.flatMap(({ node, output }) => lines(output!.stdout).map((line) => `${node}: ${line}\n`)).join(''),
          stderr: outputs.flatMap(({ node, output }) => lines(output!.stderr).map((line) => `pdsh@head: ${node}: ${line}\n`)).join(''),
        };
      },
    };
  }

  /**
   * `ssh [options] NODE COMMAND...`: the head node reaching a compute node. A compute node runs LBNL's
   * Node Health Check (`nhc`, e.g. `/usr/sbin/nhc`): it passes (exit 0), or with the node's
   * `faults.healthCheck` fails (exit 1, NHC's ERROR line) or never returns (`hang`); a node Slurm does
   * not know, or one down or not responding, refuses the connection (exit 255, as ssh). Any other
   * command is a task-graph task command (onNode).
   */
  private ssh(args: string[]): Output {
    const WITH_VALUE = new Set(['-o', '-p', '-i', '-l', '-F', '-J']);
    let i = 0;
    while (i < args.length && args[i]!.startsWith('-')) i += WITH_VALUE.has(args[i]!) ? 2 : 1;
    const [given, program, ...rest] = args.slice(i);
    const host = given && (this.deps.slurmHostName?.(given) ?? given);
    if (!host || !program) return { exitCode: 255, stderr: 'usage: ssh [options] destination command\n' };
    if (program.split('/').pop() !== 'nhc') return { exitCode: 0, pending: this.onNode(host, args.slice(i + 1).join(' ')) };
    const node = this.deps.workloadManager.get(host);
    if (!node) return { exitCode: 255, stderr: `ssh: Could not resolve hostname ${host}: Name or service not known\n` };
    if (node.flags.includes('NOT_RESPONDING') || node.base === 'DOWN')
      return { exitCode: 255, stderr: `ssh: connect to host ${host} port 22: Connection refused\n` };
    if (rest.some((a) => a !== '-q' && a !== '-v')) return { exitCode: 2, stderr: `nhc: unsupported arguments: ${rest.join(' ')}\n` };
    this.healthChecks.set(host, (this.healthChecks.get(host) ?? 0) + 1);
    const fault = this.nodeFaults.get(host)?.healthCheck;
    if (fault === 'hang') return { exitCode: 0, pending: () => undefined };
    const seconds = this.deps.timing.healthCheckSeconds;
    if (fault === 'fail')
      return { exitCode: 1, stdout: `ERROR:  nhc:  Health check failed:  check_fs_mount:  /scratch not mounted (simulated fault on ${host})\n`, seconds };
    return { exitCode: 0, stdout: '', seconds };
  }

  /**
   * What a simulated node's shell runs: the task-graph task command the task executor sends
   * (`ROLLOUT_TASK=<id> timeout <s> /bin/sh -c <script> </dev/null >><log> 2>&1; echo "rollout-task-exit=$?"`),
   * driving the task model; the script itself stands for the task and is not run. Its output once it
   * ended, undefined while it runs.
   */
  private onNode(host: string, command: string): () => Output | undefined {
    // On CSM a node answers to its xname and its nid name alike (both resolve on the node management network).
    const wlmName = this.deps.slurmHostName?.(host) ?? host;
    if (!this.deps.workloadManager.get(wlmName)) return () => ({ exitCode: 255, stderr: `ssh: Could not resolve hostname ${host}\n` });
    const task = parseTaskCommand(command);
    if (!task) return () => ({ exitCode: 127, stderr: `sim-node: only task-graph task commands are simulated: ${command.slice(0, 200)}\n` });
    const entry: TaskLogEntry = this.deps.tasks.start(this.deps.siteHostName?.(wlmName) ?? wlmName, task.task, task.timeoutSeconds);
    return () => {
      this.deps.timeline.sync();
      if (entry.result === undefined) return undefined;
      return { exitCode: 0, stdout: `${TASK_EXIT_MARKER}${EXIT_CODES[entry.result]}\n` };
    };
  }

  private wwctl(args: string[]): Output {
    const words = args.filter((a) => a !== '--yes' && a !== '-y');
    const i = words.findIndex((a) => a === '--image' || a === '--container');
    if (i < 0 || words[i + 1] === undefined || words.length !== 3) return { exitCode: 1, stderr: 'wwctl: usage: wwctl node set --image IMAGE NODES\n' };
    const image = words[i + 1]!;
    const nodes = words.filter((_, k) => k !== i && k !== i + 1)[0]!;
    const names = this.nodesOf(nodes);
    if (!names) return { exitCode: 1, stderr: `wwctl: no such node in ${nodes}\n` };
    for (const name of names) this.images.set(name, image);
    return { exitCode: 0, stdout: '' };
  }

  private nodeset(args: string[]): Output {
    const image = args.find((a) => a.startsWith('osimage='))?.slice('osimage='.length);
    const nodes = args.filter((a) => !a.startsWith('osimage='));
    if (!image || nodes.length !== 1) return { exitCode: 1, stderr: 'nodeset: usage: nodeset NODERANGE osimage=IMAGE\n' };
    const names = this.nodesOf(nodes[0]);
    if (!names) return { exitCode: 1, stderr: `nodeset: no such node in ${nodes[0]}\n` };
    for (const name of names) this.images.set(name, image);
    return { exitCode: 0, stdout: `${nodes[0]}: install ${image}\n` };
  }
}

/** What a node's shell reports: 0 ok, 1 failed, coreutils `timeout`'s 124. */
const EXIT_CODES = { ok: 0, failed: 1, timeout: 124 } as const;
const TASK_COMMAND_END = `; echo "${TASK_EXIT_MARKER}$?"`;
const REDIRECTIONS = / <\/dev\/null >>('[^']*'|[^\s'"]+) 2>&1$/;

/** The task and its timeout of a task-graph task command, or undefined for anything else. */
function parseTaskCommand(command: string): { task: string; timeoutSeconds: number } | undefined {
  if (!command.endsWith(TASK_COMMAND_END)) return undefined;
  const run = command.slice(0, -TASK_COMMAND_END.length).replace(REDIRECTIONS, '');
  const words = shellWords(run);
  if (!words || words.length !== 6 || !words[0]!.startsWith('ROLLOUT_TASK=') || words[1] !== 'timeout' || words[3] !== '/bin/sh' || words[4] !== '-c')
    return undefined;
  const timeoutSeconds = Number(words[2]);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) return undefined;
  return { task: words[0]!.slice('ROLLOUT_TASK='.length), timeoutSeconds };
}

/** What SSM's notifications say of an invocation. */
function notified(invocation: Invocation): NotifiedCommand {
  const { commandId, instanceId, commandLine, requestedAt, timeoutAt } = invocation;
  return { commandId, instanceId, commands: [commandLine], requestedAt, timeoutAt };
}

function lines(text: string | undefined): string[] {
  return (text ?? '').split('\n').filter((line) => line !== '');
}

/**
 * The features a node has from the site file: `rack:`, a `role:` for each of its deployment roles
 * (its `role` when it has none), its labels as `key:value`, its tags.
 */
function fixedFeatures(node: InventoryNode): string[] {
  const roles = node.roles && node.roles.length > 0 ? node.roles : [node.role];
  return [
    ...(node.rack ? [`rack:${node.rack}`] : []),
    ...roles.map((role) => `role:${role}`),
    ...Object.entries(node.labels).map(([k, v]) => `${k}:${v}`),
    ...node.tags,
  ];
}

/** squeue's %L: `[days-]hours:minutes:seconds`, as Slurm prints it (minutes:seconds under an hour). */
function timeLeft(seconds: number): string {
  const s = Math.max(0, seconds);
  const days = Math.floor(s / 86400);
  const hours = Math.floor((s % 86400) / 3600);
  const pad = (n: number) => String(n).padStart(2, '0');
  const clock = `${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
  if (days > 0) return `${days}-${pad(hours)}:${clock}`;
  return hours > 0 ? `${hours}:${clock}` : clock;
}

/**
 * The reason scontrol sends for `Reason=<value>`: one `"` dropped at the start and one at the end
 * (src/scontrol/update_node.c, scontrol_update_node, alike in 22.05, 24.11 and master); the rest as the shell gave it.
 */
export function scontrolReasonValue(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const head = value.startsWith('"') ? value.slice(1) : value;
  return head.endsWith('"') ? head.slice(0, -1) : head;
}
