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
import type { TaskLogEntry, TaskRunnerModel } from './task-runner';
import type { WorkloadManagerModel } from './workload-manager';

/** The simulated cluster's one partition, holding every node. */
export const SIMULATED_PARTITION = 'batch';

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
}

export interface HeadNodeDeps {
  workloadManager: WorkloadManagerModel;
  /** What `provision prepare|deploy <hostlist>` drives. */
  provisioner: ProvisionerModel;
  /** What task-graph commands run on the nodes through `pdsh` or `ssh` drive. */
  tasks: TaskRunnerModel;
  /** Node features are read from and written to the inventory's groups (see `features`). */
  inventory: InventoryModel;
  timing: Pick<SiteTiming, 'bootSeconds' | 'returnSeconds'>;
  nodes: readonly Pick<SiteNode, 'name' | 'faults'>[];
  commandFaults: readonly CommandFault[];
  timeline: Timeline;
  violations: string[];
  /** Where every `scontrol reboot` is logged with the run the node's reason names. */
  changes?: NodeChangeLog;
}

export interface Output {
  exitCode: number;
  stdout?: string;
  stderr?: string;
  /** The command goes on in simulated time: its output once it finished. */
  pending?: () => Output | undefined;
}

/**
 * A Slurm head node reached through SSM Run Command: runs the commands the command connectors send
 * (`scontrol update|reboot|show node`, `sinfo`, `wwctl node set`, `nodeset`) against the site models.
 * Anything else exits 127, as a shell answers an unknown command.
 *
 * Slurm's view of the inventory: one partition `batch` with every node; a node's features are
 * `rack:<rack>`, `role:<role>`, `<key>:<value>` for its labels, its tags, and the label
 * of every site-file group it is in. Setting a node's features edits those groups (a new feature
 * label makes a group), so the HSM and Slurm views of one simulated site always agree.
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
  private nextId = 1;
  private provisionRuns = 0;

  constructor(private readonly deps: HeadNodeDeps) {
    this.faultSeen = deps.commandFaults.map(() => 0);
    this.nodeFaults = new Map(deps.nodes.map((n) => [n.name, n.faults]));
  }

  bootCount(node: string): number {
    return this.bootCounts.get(node) ?? 0;
  }

  /** SendCommand: the command runs now; its result shows once simulated time reaches `doneAt`. */
  send(instanceId: string, commands: readonly string[], executionTimeoutSeconds: number, comment?: string): Invocation {
    const now = this.deps.timeline.sync();
    const commandId = `${String(this.nextId++).padStart(8, '0')}-0000-4000-8000-000000000000`;
    const commandLine = commands.join('\n');
    const invocation: Invocation = {
      commandId,
      instanceId,
      commandLine,
      ...(comment !== undefined ? { comment } : {}),
      requestedAt: now,
      doneAt: now,
      timeoutAt: now + executionTimeoutSeconds * 1000,
      exitCode: 0,
      stdout: '',
      stderr: '',
      polls: 0,
    };
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
    Object.assign(invocation, { exitCode: out.exitCode, stdout: out.stdout ?? '', stderr: out.stderr ?? '' });
    return invocation;
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
    if (now >= invocation.timeoutAt && invocation.doneAt > invocation.timeoutAt) return { invocation, status: 'TimedOut' };
    if (invocation.polls === 1 || now < invocation.doneAt) return { invocation, status: 'InProgress' };
    return { invocation, status: invocation.exitCode === 0 ? 'Success' : 'Failed' };
  }

  /** An invocation's status without counting a poll (ListCommandInvocations). */
  peek(invocation: Invocation): InvocationStatus {
    const now = this.deps.timeline.sync();
    if (invocation.pending === undefined && now >= invocation.doneAt) return invocation.exitCode === 0 ? 'Success' : 'Failed';
    return now >= invocation.timeoutAt ? 'TimedOut' : 'InProgress';
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
    for (const line of commands) {
      const argv = shellWords(line);
      if (argv === undefined) return { exitCode: 127, stdout, stderr: `${stderr}sim-head-node: unsupported shell syntax in: ${line}\n` };
      if (argv.length === 0) continue;
      last = this.run(argv);
      if (last.pending) return last;
      stdout += last.stdout ?? '';
      stderr += last.stderr ?? '';
      if (last.exitCode !== 0) break;
    }
    return { exitCode: last.exitCode, stdout, stderr };
  }

  private run(argv: string[]): Output {
    const [program, ...args] = argv;
    const base = program!.split('/').pop();
    if (base === 'scontrol') return this.scontrol(args);
    if (base === 'wwctl' && args[0] === 'node' && args[1] === 'set') return this.wwctl(args.slice(2));
    if (base === 'nodeset') return this.nodeset(args);
    if (base === 'sinfo') return this.sinfo(args);
    if (base === 'squeue') return this.squeue(args);
    if (base === 'provision') return this.provision(args);
    if (base === 'pdsh') return this.pdsh(args);
    if (base === 'ssh') return this.ssh(args);
    return { exitCode: 127, stderr: `sh: ${program}: command not found\n` };
  }

  private scontrol(args: string[]): Output {
    const json = args[0] === '--json';
    const rest = json ? args.slice(1) : args;
    const [verb, ...more] = rest;
    if (verb === 'show' && more[0] === 'node' && json) return this.showNodes(more[1]);
    if (verb === 'update') return this.update(more);
    if (verb === 'reboot') return this.reboot(more);
    return { exitCode: 1, stderr: `scontrol: unsupported command: ${rest.join(' ')}\n` };
  }

  private showNodes(hostlist: string | undefined): Output {
    const wlm = this.deps.workloadManager;
    const nodes = hostlist === undefined ? wlm.list() : expandHostlist(hostlist).flatMap((n) => wlm.get(n) ?? []);
    if (nodes.length === 0) return { exitCode: 1, stdout: JSON.stringify({ nodes: [], errors: [{ error: 'Node not found' }] }), stderr: `Node ${hostlist} not found\n` };
    const features = this.features();
    return { exitCode: 0, stdout: scontrolShowNodeJson(nodes, (name) => features.get(name) ?? [], this.deps.timeline.sync()) };
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

  private nodesOf(hostlist: string | undefined): string[] {
    if (!hostlist) throw new Error('scontrol: no nodes given');
    const names = expandHostlist(hostlist);
    const unknown = names.filter((n) => !this.deps.workloadManager.get(n));
    if (unknown.length > 0) throw new Error(`scontrol: Invalid node name specified: ${unknown.join(',')}`);
    return names;
  }

  private update(args: readonly string[]): Output {
    const kv = this.keyValues(args);
    const names = this.nodesOf(kv.get('nodename'));
    const available = kv.get('availablefeatures') ?? kv.get('features');
    if (available !== undefined) return this.setFeatures(names, available, kv.get('activefeatures'));
    const state = kv.get('state')?.toUpperCase();
    const reason = kv.get('reason');
    const wlm = this.deps.workloadManager;
    if ((state === 'DRAIN' || state === 'FAIL') && !reason?.trim()) return { exitCode: 1, stderr: `scontrol: a reason is required to set ${state}\n` };
    for (const name of names) {
      if (state === 'DRAIN') wlm.drain(name, reason!);
      else if (state === 'FAIL') wlm.fail(name, reason!);
      else if (state === 'RESUME') wlm.resume(name, reason);
      else return { exitCode: 1, stderr: `scontrol: unsupported State=${state ?? ''}\n` };
    }
    return { exitCode: 0 };
  }

  /** `scontrol reboot [ASAP] [nextstate=RESUME|DOWN] [reason=...] <hostlist>` */
  private reboot(args: string[]): Output {
    const asap = args[0]?.toUpperCase() === 'ASAP';
    const rest = asap ? args.slice(1) : args;
    const hostlist = rest.pop();
    const kv = this.keyValues(rest);
    const nextState = (kv.get('nextstate') ?? 'DOWN').toUpperCase();
    if (nextState !== 'RESUME' && nextState !== 'DOWN') return { exitCode: 1, stderr: `scontrol: invalid nextstate ${nextState}\n` };
    const names = this.nodesOf(hostlist);
    const wlm = this.deps.workloadManager;
    for (const name of names) {
      const node = wlm.get(name)!;
      if (node.flags.includes('REBOOT_REQUESTED') || node.flags.includes('REBOOT_ISSUED')) continue;
      // nextstate=RESUME lifts only the drain this reboot set: a drain that was there before stays.
      const drainedBefore = node.flags.includes('DRAIN');
      if (asap && !drainedBefore) wlm.drain(name, kv.get('reason') ?? 'Reboot ASAP');
      wlm.setRebootPending(name, 'REBOOT_REQUESTED');
      this.issueWhenIdle(name, nextState === 'RESUME' && !drainedBefore);
    }
    return { exitCode: 0 };
  }

  private issueWhenIdle(name: string, clearDrain: boolean): void {
    const { workloadManager: wlm, timeline } = this.deps;
    const endsAt = wlm.jobEndsAt(name);
    if (endsAt === Infinity) return;
    if (endsAt !== undefined) {
      timeline.at(endsAt, () => this.issueWhenIdle(name, clearDrain));
      return;
    }
    const now = timeline.sync();
    if (this.rebooting.has(name)) this.deps.violations.push(`${new Date(now).toISOString()} node ${name} rebooted by scontrol while still rebooting`);
    this.rebooting.add(name);
    this.bootCounts.set(name, this.bootCount(name) + 1);
    this.deps.changes?.byNodeReason(now, name, 'boot', wlm.get(name)?.reason);
    wlm.setRebootPending(name, 'REBOOT_ISSUED');
    const generation = wlm.reboot(name);
    const faults: Partial<SiteNode['faults']> = this.nodeFaults.get(name) ?? {};
    if (faults.boot === 'hang' || faults.returnToService === 'never') return;
    const { bootSeconds, returnSeconds } = this.deps.timing;
    if (faults.boot === 'fail') {
      timeline.at(now + bootSeconds * 1000, () => {
        this.rebooting.delete(name);
        wlm.markDown(name, 'reboot timed out');
      });
      return;
    }
    timeline.at(now + (bootSeconds + returnSeconds) * 1000, () => {
      this.rebooting.delete(name);
      wlm.register(name, generation, { clearDrain });
    });
  }

  /** Every node's features: the fixed ones from the site file, then its groups' labels. */
  features(): Map<string, string[]> {
    const inventory = this.deps.inventory;
    const features = new Map(inventory.listNodes().map((node) => [node.name, fixedFeatures(node)]));
    for (const group of inventory.listGroups()) for (const member of group.members) features.get(member)?.push(group.label);
    return features;
  }

  /** `scontrol update NodeName=<hostlist> AvailableFeatures=<list> [ActiveFeatures=<list>]`: group features become group memberships. */
  private setFeatures(names: readonly string[], available: string, active: string | undefined): Output {
    const wanted = available.split(',').filter(Boolean);
    if (active !== undefined && active.split(',').filter(Boolean).some((f) => !wanted.includes(f))) return { exitCode: 1, stderr: 'scontrol: ActiveFeatures must be a subset of AvailableFeatures\n' };
    const inventory = this.deps.inventory;
    const nodes = new Map(inventory.listNodes().map((n) => [n.name, n]));
    for (const name of names) {
      const fixed = fixedFeatures(nodes.get(name)!);
      const lost = fixed.filter((f) => !wanted.includes(f));
      if (lost.length > 0) return { exitCode: 1, stderr: `sim-head-node: removing site-file features (${lost.join(',')}) is not simulated\n` };
      const groups = new Set(wanted.filter((f) => !fixed.includes(f)));
      for (const group of inventory.listGroups()) {
        if (group.members.includes(name) && !groups.has(group.label)) inventory.removeMember(group.label, name);
      }
      for (const label of groups) {
        if (!inventory.hasGroup(label)) inventory.createGroup(label);
        if (!inventory.getGroup(label).members.includes(name)) inventory.addMember(label, name);
      }
    }
    return { exitCode: 0 };
  }

  /**
   * `sinfo --noheader [--nodes=<hostlist>] --format=<fmt>` with %R (partition), %f (available
   * features), %N (hostlist): like sinfo, one line per distinct value of the other fields.
   */
  private sinfo(args: string[]): Output {
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
    if ((kind !== 'prepare' && kind !== 'deploy') || !hostlist || args.length !== 2) return { exitCode: 2, stderr: 'provision: usage: provision prepare|deploy HOSTLIST\n' };
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
        const lines = [...(ok.length > 0 ? [`node=${compressHostlist(ok)} ok\n`] : []), ...(failed.length > 0 ? [`node=${compressHostlist(failed)} failed\n`] : [])];
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
    const [host, program, ...rest] = args.slice(i);
    if (!host || !program) return { exitCode: 255, stderr: 'usage: ssh [options] destination command\n' };
    if (program.split('/').pop() !== 'nhc') return { exitCode: 0, pending: this.onNode(host, args.slice(i + 1).join(' ')) };
    const node = this.deps.workloadManager.get(host);
    if (!node) return { exitCode: 255, stderr: `ssh: Could not resolve hostname ${host}: Name or service not known\n` };
    if (node.flags.includes('NOT_RESPONDING') || node.base === 'DOWN') return { exitCode: 255, stderr: `ssh: connect to host ${host} port 22: Connection refused\n` };
    if (rest.some((a) => a !== '-q' && a !== '-v')) return { exitCode: 2, stderr: `nhc: unsupported arguments: ${rest.join(' ')}\n` };
    this.healthChecks.set(host, (this.healthChecks.get(host) ?? 0) + 1);
    const fault = this.nodeFaults.get(host)?.healthCheck;
    if (fault === 'hang') return { exitCode: 0, pending: () => undefined };
    if (fault === 'fail') return { exitCode: 1, stdout: `ERROR:  nhc:  Health check failed:  check_fs_mount:  /scratch not mounted (simulated fault on ${host})\n` };
    return { exitCode: 0, stdout: '' };
  }

  /**
   * What a simulated node's shell runs: the task-graph task command the task executor sends
   * (`ROLLOUT_TASK=<id> timeout <s> /bin/sh -c <script> </dev/null >><log> 2>&1; echo "rollout-task-exit=$?"`),
   * driving the task model; the script itself stands for the task and is not run. Its output once it
   * ended, undefined while it runs.
   */
  private onNode(node: string, command: string): () => Output | undefined {
    if (!this.deps.workloadManager.get(node)) return () => ({ exitCode: 255, stderr: `ssh: Could not resolve hostname ${node}\n` });
    const task = parseTaskCommand(command);
    if (!task) return () => ({ exitCode: 127, stderr: `sim-node: only task-graph task commands are simulated: ${command.slice(0, 200)}\n` });
    const entry: TaskLogEntry = this.deps.tasks.start(node, task.task, task.timeoutSeconds);
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
    for (const name of this.nodesOf(nodes)) this.images.set(name, image);
    return { exitCode: 0, stdout: '' };
  }

  private nodeset(args: string[]): Output {
    const image = args.find((a) => a.startsWith('osimage='))?.slice('osimage='.length);
    const nodes = args.filter((a) => !a.startsWith('osimage='));
    if (!image || nodes.length !== 1) return { exitCode: 1, stderr: 'nodeset: usage: nodeset NODERANGE osimage=IMAGE\n' };
    for (const name of this.nodesOf(nodes[0])) this.images.set(name, image);
    return { exitCode: 0, stdout: `${nodes[0]}: install ${image}\n` };
  }
}

const TASK_EXIT_MARKER = 'rollout-task-exit=';
/** What a node's shell reports: 0 ok, 1 failed, coreutils `timeout`'s 124. */
const EXIT_CODES = { ok: 0, failed: 1, timeout: 124 } as const;
const TASK_COMMAND_END = `; echo "${TASK_EXIT_MARKER}$?"`;
const REDIRECTIONS = / <\/dev\/null >>('[^']*'|[^\s'"]+) 2>&1$/;

/** The task and its timeout of a task-graph task command, or undefined for anything else. */
function parseTaskCommand(command: string): { task: string; timeoutSeconds: number } | undefined {
  if (!command.endsWith(TASK_COMMAND_END)) return undefined;
  const run = command.slice(0, -TASK_COMMAND_END.length).replace(REDIRECTIONS, '');
  const words = shellWords(run);
  if (!words || words.length !== 6 || !words[0]!.startsWith('ROLLOUT_TASK=') || words[1] !== 'timeout' || words[3] !== '/bin/sh' || words[4] !== '-c') return undefined;
  const timeoutSeconds = Number(words[2]);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) return undefined;
  return { task: words[0]!.slice('ROLLOUT_TASK='.length), timeoutSeconds };
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
  return [...(node.rack ? [`rack:${node.rack}`] : []), ...roles.map((role) => `role:${role}`), ...Object.entries(node.labels).map(([k, v]) => `${k}:${v}`), ...node.tags];
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
