/**
 * A real Slurm cluster on this one machine, for tests and by hand (`npm run slurm:start`): one
 * slurmctld, one `slurmd -N <name>` per node (each on its own port, `NodeHostname=` this host), a
 * RebootProgram stand-in (scripts/slurm/reboot-program.sh) that makes `scontrol reboot` stop the
 * node's slurmd and start it again with `-b` (a new BootTime), an Epilog a test can slow down (to
 * see COMPLETING), JWT and slurmrestd with the openapi versions installed.
 *
 * Every cluster lives in its own temp dir (slurm.conf, state, spool, logs, pid files) with its own
 * ports, so test files run clusters side by side and other developers run theirs on this machine at
 * the same time. `stop()` kills what the cluster started, by pid (never by name), then anything
 * still running inside its dir (job steps, epilogs), and removes the dir.
 *
 * What was seen on Debian 12's Slurm 22.05.8: /work/shared/REFERENCE.md "A real Slurm on one machine".
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { readSdiag, resetSdiag, type SdiagCounts } from './sdiag';

const execFileAsync = promisify(execFile);

/** The repository (scripts/slurm/ lives there): from this file under jest (CommonJS), else the working directory. */
const DEFAULT_REPO_DIR = typeof __dirname === 'string' ? path.resolve(__dirname, '..', '..') : process.cwd();

/** The unprivileged user slurmrestd runs as: Debian's packages create `slurm`; our clusters' SlurmUser is root, so it is neither root, SlurmUser nor nobody (24.11 refuses those). */
export const SLURMRESTD_USER = 'slurm';

const SBIN_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const REQUIRED_COMMANDS = ['slurmctld', 'slurmd', 'slurmrestd', 'scontrol', 'sinfo', 'squeue', 'sbatch', 'scancel', 'sdiag', 'munge', 'unmunge'];

let unavailableReason: string | undefined | null = null;

/**
 * Why a real Slurm cannot run here (undefined: it can). Checked once per process: Linux, root (slurmd
 * and the reboot stand-in need it), the Slurm and munge commands, the jwt plugin and slurmrestd's user.
 */
export function realSlurmUnavailable(): string | undefined {
  if (unavailableReason !== null) return unavailableReason;
  unavailableReason = findUnavailableReason();
  return unavailableReason;
}

function findUnavailableReason(): string | undefined {
  const install = 'run scripts/slurm/install.sh as root (Debian: slurmctld slurmd slurmrestd slurm-client munge slurm-wlm-jwt-plugin)';
  if (process.platform !== 'linux') return `a real Slurm runs on Linux only (this is ${process.platform})`;
  const missing = REQUIRED_COMMANDS.filter((command) => !onPath(command));
  if (missing.length > 0) return `Slurm is not installed here (missing ${missing.join(', ')}): ${install}`;
  if (process.getuid?.() !== 0)
    return 'a real Slurm cluster on one machine needs root (slurmd runs as root, and so does the RebootProgram stand-in that restarts it)';
  try {
    execFileSync('id', ['-u', SLURMRESTD_USER], { stdio: 'ignore' });
  } catch {
    return `no user '${SLURMRESTD_USER}' for slurmrestd (Debian's Slurm packages create it): ${install}`;
  }
  if (!jwtPluginInstalled()) return `Slurm's auth/jwt plugin (auth_jwt.so) is not installed: ${install}`;
  return undefined;
}

function onPath(command: string): boolean {
  return SBIN_PATH.split(':').some((dir) => existsSync(path.join(dir, command)));
}

function jwtPluginInstalled(): boolean {
  const roots = ['/usr/lib', '/usr/lib64', '/usr/local/lib'];
  const candidates = roots.flatMap((root) => {
    const dirs = [path.join(root, 'slurm'), path.join(root, 'slurm-wlm')];
    try {
      for (const entry of readdirSync(root)) if (entry.endsWith('-linux-gnu')) dirs.push(path.join(root, entry, 'slurm-wlm'), path.join(root, entry, 'slurm'));
    } catch {
      // no such root
    }
    return dirs;
  });
  return candidates.some((dir) => existsSync(path.join(dir, 'auth_jwt.so')));
}

/**
 * `describe` for a suite that needs a real Slurm. Where none can run it is skipped, saying why (in
 * the suite's name and on the console), never passing empty; with `REQUIRE_REAL_SLURM=1` (as
 * `.ci/run` sets it) it fails instead, with the reason.
 */
export function describeRealSlurm(title: string, body: () => void): void {
  const reason = realSlurmUnavailable();
  if (reason === undefined) {
    describe(title, body);
    return;
  }
  if (process.env.REQUIRE_REAL_SLURM === '1') {
    describe(title, () => {
      test('a real Slurm is required here (REQUIRE_REAL_SLURM=1)', () => {
        throw new Error(`cannot run a real Slurm: ${reason}`);
      });
    });
    return;
  }
  console.warn(`${title}: SKIPPED, ${reason}`);
  describe.skip(`${title} (SKIPPED: ${reason})`, body);
}

export interface PartitionSpec {
  name: string;
  /** Node names; every node when absent. */
  nodes?: readonly string[];
  default?: boolean;
}

export interface RealSlurmOptions {
  /** How many nodes (default 8), named `<prefix>01`, `<prefix>02`, ... */
  nodes?: number;
  /** Node name prefix (default `c`). */
  nodePrefix?: string;
  /** slurm.conf SlurmdTimeout, seconds (default 30): a node whose slurmd is gone this long is DOWN, `Not responding`. */
  slurmdTimeout?: number;
  /** slurm.conf ResumeTimeout, seconds (default 60): a reboot not back by then sets the node DOWN `reboot timed out`. */
  resumeTimeout?: number;
  /** slurm.conf ReturnToService (default 2). */
  returnToService?: 0 | 1 | 2;
  /** Partitions (default one, `batch`, every node, the default). */
  partitions?: readonly PartitionSpec[];
  /** slurm.conf `Feature=` per node name. */
  features?: Readonly<Record<string, readonly string[]>>;
  /** Seconds the RebootProgram stand-in keeps a node's slurmd down (default 1). */
  rebootDelaySeconds?: number;
  /** Start slurmrestd (default true). */
  restd?: boolean;
  /** Partition MaxTime, minutes (default 10): every job ends. */
  maxTimeMinutes?: number;
  /** Where scripts/slurm/ is (default: this repository). */
  repoDir?: string;
  /** Keep the dir (logs) after stop(), e.g. to read why something failed. */
  keepDir?: boolean;
}

/** A node as slurmctld holds it, read through Slurm's own JSON (`sinfo --json` on 22.05, `scontrol --json show node` from 23.02). */
export interface RealNode {
  name: string;
  /** IDLE, ALLOCATED, MIXED, DOWN, ... */
  base: string;
  /** DRAIN, NOT_RESPONDING, REBOOT_REQUESTED, REBOOT_ISSUED, COMPLETING, FAIL, ... sorted. */
  flags: string[];
  reason: string;
  features: string[];
  activeFeatures: string[];
  /** Epoch seconds (0: unknown). */
  bootTime: number;
}

export type RebootBehaviour = 'normal' | 'fail' | 'never' | { delaySeconds: number };

export interface RebootLogEntry {
  node: string;
  /** Epoch seconds. */
  at: number;
  outcome: 'rebooted' | 'failed' | 'never-back';
}

export interface RestdInfo {
  url: string;
  /** The openapi versions this slurmrestd serves, e.g. ['v0.0.36', 'v0.0.37', 'v0.0.38']. */
  versions: string[];
}

interface ClusterLayout {
  dir: string;
  conf: string;
  nodes: string[];
  ports: { controller: number; restd: number; nodes: number[] };
}

const LIVE_CLUSTERS = new Set<RealSlurmCluster>();
let exitHookInstalled = false;

/** A running cluster. Start one with `RealSlurmCluster.start()`; always `stop()` it. */
export class RealSlurmCluster {
  readonly dir: string;
  /** The cluster's slurm.conf: give every Slurm command `SLURM_CONF=<conf>` (see `env`). */
  readonly conf: string;
  readonly nodes: readonly string[];
  /** An environment for Slurm commands run against this cluster. */
  readonly env: NodeJS.ProcessEnv;
  /** `22.05.8`, ... */
  version = '';
  restd?: RestdInfo;
  private stopped = false;

  private constructor(
    layout: ClusterLayout,
    private readonly options: Required<Omit<RealSlurmOptions, 'features' | 'partitions' | 'repoDir'>> &
      Pick<RealSlurmOptions, 'features' | 'partitions'> & { repoDir: string },
  ) {
    this.dir = layout.dir;
    this.conf = layout.conf;
    this.nodes = layout.nodes;
    this.ports = layout.ports;
    this.env = { ...process.env, SLURM_CONF: layout.conf, PATH: `${process.env.PATH ?? ''}:${SBIN_PATH}` };
  }

  private readonly ports: ClusterLayout['ports'];

  /** Starts a cluster and waits until every node is idle (a few seconds). Throws with the reason when it cannot. */
  static async start(options: RealSlurmOptions = {}): Promise<RealSlurmCluster> {
    const reason = realSlurmUnavailable();
    if (reason) throw new Error(`cannot start a real Slurm: ${reason}`);
    const resolved = {
      nodes: options.nodes ?? 8,
      nodePrefix: options.nodePrefix ?? 'c',
      slurmdTimeout: options.slurmdTimeout ?? 30,
      resumeTimeout: options.resumeTimeout ?? 60,
      returnToService: options.returnToService ?? 2,
      rebootDelaySeconds: options.rebootDelaySeconds ?? 1,
      restd: options.restd ?? true,
      maxTimeMinutes: options.maxTimeMinutes ?? 10,
      keepDir: options.keepDir ?? process.env.REAL_SLURM_KEEP_DIR === '1',
      repoDir: options.repoDir ?? DEFAULT_REPO_DIR,
      features: options.features,
      partitions: options.partitions,
    };
    if (!Number.isInteger(resolved.nodes) || resolved.nodes < 1 || resolved.nodes > 99)
      throw new Error(`nodes must be a whole number from 1 to 99, not ${resolved.nodes}`);
    if (!/^[a-z][a-z0-9-]*$/.test(resolved.nodePrefix))
      throw new Error(`nodePrefix must be lowercase letters, digits and '-', starting with a letter: '${resolved.nodePrefix}'`);
    await execFileAsync('sh', [path.join(resolved.repoDir, 'scripts', 'slurm', 'munge.sh')], {
      env: { ...process.env, PATH: `${process.env.PATH ?? ''}:${SBIN_PATH}` },
    });

    // Ports are picked free, then bound by the daemons: another process may take one between the two, so try again.
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      const layout = await writeCluster(resolved);
      const cluster = new RealSlurmCluster(layout, resolved);
      LIVE_CLUSTERS.add(cluster);
      installExitHook();
      try {
        await cluster.boot();
        return cluster;
      } catch (err) {
        lastError = err;
        const portClash = /Address already in use|bind.*failed|Unable to bind/i.test(cluster.logs());
        await cluster.stop({ keepDir: !portClash || resolved.keepDir });
        if (!portClash) break;
      }
    }
    throw lastError;
  }

  private async boot(): Promise<void> {
    this.version = (await this.run('scontrol', ['--version'])).stdout.trim().replace(/^slurm(-wlm)?\s+/, '');
    await this.startController({ clean: true });
    await Promise.all(this.nodes.map((node) => this.startSlurmd(node)));
    await this.waitForNodes((nodes) => nodes.every((n) => n.base === 'IDLE' && n.flags.length === 0), 'every node idle', 30_000);
    // A node can look idle with its own slurmd gone: another cluster's slurmd that took the same port answers the
    // controller's pings (one munge key on the machine). Each node's slurmd must run, bound to its port.
    const notRunning = this.nodes.filter((node) => !this.slurmdRuns(node));
    if (notRunning.length > 0) throw new Error(`the slurmd of ${notRunning.join(', ')} is not running (its port taken?):\n${this.logs()}`);
    if (this.options.restd) await this.startRestd();
  }

  /** Runs a command against this cluster (SLURM_CONF set); rejects with its stderr when it exits non-zero. */
  async run(command: string, args: readonly string[], options: { timeoutMs?: number } = {}): Promise<{ stdout: string; stderr: string }> {
    try {
      return await execFileAsync(command, args, { env: this.env, timeout: options.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024 });
    } catch (err) {
      const e = err as { stderr?: string; code?: number | string; message: string };
      throw new Error(`${command} ${args.join(' ')} failed (exit ${e.code ?? '?'}): ${(e.stderr ?? '').trim() || e.message}`, { cause: err });
    }
  }

  /** Like `run`, but resolves with the exit code instead of rejecting. */
  async tryRun(command: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(command, args, { env: this.env, timeout: 30_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      });
    });
  }

  async scontrol(...args: string[]): Promise<string> {
    return (await this.run('scontrol', args)).stdout;
  }

  /** Every node (or those named) as slurmctld holds it now. */
  async readNodes(): Promise<RealNode[]> {
    const [command, ...args] = nodesCommand(this.version);
    const { stdout } = await this.run(command!, args);
    return parseNodes(this.version, stdout);
  }

  async node(name: string): Promise<RealNode> {
    const node = (await this.readNodes()).find((n) => n.name === name);
    if (!node) throw new Error(`no node ${name} in this cluster (${this.nodes.join(', ')})`);
    return node;
  }

  /** Polls the nodes until `holds` does (every 200 ms), or fails naming `what` and the nodes as last seen. */
  async waitForNodes(holds: (nodes: RealNode[]) => boolean, what: string, timeoutMs = 60_000): Promise<RealNode[]> {
    const deadline = Date.now() + timeoutMs;
    let last: RealNode[] = [];
    for (;;) {
      try {
        last = await this.readNodes();
        if (holds(last)) return last;
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
      if (Date.now() > deadline) {
        const seen = last.map((n) => `${n.name}=${[n.base, ...n.flags].join('+')}${n.reason ? ` (${n.reason})` : ''}`).join(', ');
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; nodes: ${seen}\n${this.logs(20)}`);
      }
      await sleep(200);
    }
  }

  async waitForNode(name: string, holds: (node: RealNode) => boolean, what: string, timeoutMs = 60_000): Promise<RealNode> {
    let nodes: RealNode[];
    try {
      nodes = await this.waitForNodes((all) => all.some((n) => n.name === name && holds(n)), `${name}: ${what}`, timeoutMs);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${this.nodeDiagnostics(name)}`, { cause: err });
    }
    return nodes.find((n) => n.name === name)!;
  }

  /**
   * A real job: `sbatch -w <node> -t <limit> --wrap 'sleep <seconds>'` (its working dir inside the
   * cluster's dir, so stop() finds it). Resolves with the job id once it runs (the node is ALLOCATED).
   */
  async submitJob(node: string, options: { seconds: number; timeLimitMinutes?: number; name?: string; wait?: boolean }): Promise<number> {
    // A limit past the partition's MaxTime would leave the job PENDING.
    const limit = Math.min(options.timeLimitMinutes ?? Math.max(1, Math.ceil(options.seconds / 60) + 1), this.options.maxTimeMinutes);
    const { stdout } = await this.run('sbatch', [
      '--parsable',
      '-w',
      node,
      '-t',
      String(limit),
      '-J',
      options.name ?? 'busy',
      '-D',
      path.join(this.dir, 'jobs'),
      '-o',
      '/dev/null',
      '--wrap',
      `sleep ${options.seconds}`,
    ]);
    const jobId = Number(stdout.trim().split(';')[0]);
    if (!Number.isInteger(jobId)) throw new Error(`sbatch printed no job id: ${stdout}`);
    // slurmctld starts a job at submission when it can, else at its next scheduling pass (sched_interval, 5 s in
    // these clusters): the budget only costs time when it never starts. A short job may have run and ended
    // (COMPLETING in its Epilog, or gone) before the first look: it started all the same.
    if (options.wait !== false) await this.waitForJob(jobId, (state) => state !== 'PENDING' && state !== 'CONFIGURING', 'started', 90_000);
    return jobId;
  }

  /**
   * The job's state (`RUNNING`, `PENDING`, `COMPLETING`, ...), undefined once it left the queue (squeue shows
   * no line, or no longer knows the id). Rejects when squeue itself failed (slurmctld restarting, overloaded):
   * that is not a job that ended.
   */
  async jobState(jobId: number): Promise<string | undefined> {
    const { code, stdout, stderr } = await this.tryRun('squeue', ['-h', '-j', String(jobId), '-o', '%T']);
    if (code !== 0 && !/Invalid job id/i.test(stderr)) throw new Error(`squeue -j ${jobId} failed (exit ${code}): ${stderr.trim()}`);
    return stdout.trim() || undefined;
  }

  /** Polls the job's state until `holds` does; a failed squeue is asked again. Fails with the state last seen and slurmctld's lines about the job. */
  async waitForJob(jobId: number, holds: (state: string | undefined) => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: string;
    for (;;) {
      try {
        const state = await this.jobState(jobId);
        if (holds(state)) return;
        last = state ?? 'gone';
      } catch (err) {
        last = (err as Error).message;
      }
      if (Date.now() > deadline) {
        const lines = this.logLines('slurmctld.log', new RegExp(`JobId=${jobId}\\b`))
          .slice(-20)
          .join('\n');
        throw new Error(`timed out after ${timeoutMs} ms waiting for job ${jobId} to be ${what} (it is ${last}); slurmctld about it:\n${lines}`);
      }
      await sleep(200);
    }
  }

  /** When slurmctld recorded the job's end, epoch seconds (undefined: it has not ended, or is forgotten). */
  async jobEndTime(jobId: number): Promise<number | undefined> {
    // SLURM_TIME_FORMAT=%s: times as epoch seconds, whatever the host's time zone.
    const { code, stdout } = await this.tryRun('env', ['SLURM_TIME_FORMAT=%s', 'scontrol', '-o', 'show', 'job', String(jobId)]);
    if (code !== 0 || !/ JobState=(COMPLETED|CANCELLED|FAILED|TIMEOUT|NODE_FAIL|PREEMPTED|OUT_OF_MEMORY)\b/.test(stdout)) return undefined;
    const end = / EndTime=(\d+)/.exec(stdout)?.[1];
    return end === undefined ? undefined : Number(end);
  }

  /** Lines of one of the cluster's logs that match. */
  logLines(file: string, match: RegExp): string[] {
    try {
      return readFileSync(path.join(this.dir, 'log', file), 'utf8')
        .split('\n')
        .filter((line) => match.test(line));
    } catch {
      return [];
    }
  }

  async cancelJob(jobId: number): Promise<void> {
    await this.run('scancel', [String(jobId)]);
  }

  /** Makes the node's job end slowly: its Epilog sleeps this long (0: at once), so the node shows COMPLETING meanwhile. */
  async setEpilogSeconds(node: string, seconds: number): Promise<void> {
    await writeFile(path.join(this.dir, 'control', `epilog-${node}`), `${seconds}\n`);
  }

  /**
   * Holds the node's next Epilogs until `releaseEpilog`: the node stays COMPLETING for as long as a test
   * needs it to, however slow the host, instead of for a number of seconds (an Epilog ends on its own
   * after 10 minutes, so a test that forgets to release it cannot hang a cluster).
   */
  async holdEpilog(node: string): Promise<void> {
    await writeFile(path.join(this.dir, 'control', `epilog-hold-${node}`), '');
  }

  releaseEpilog(node: string): void {
    rmSync(path.join(this.dir, 'control', `epilog-hold-${node}`), { force: true });
  }

  /** How the RebootProgram stand-in treats this node's next reboots: `fail` exits 1 without rebooting, `never` stops slurmd for good. */
  async setRebootBehaviour(node: string, behaviour: RebootBehaviour): Promise<void> {
    const file = path.join(this.dir, 'control', node);
    if (behaviour === 'normal') rmSync(file, { force: true });
    else await writeFile(file, typeof behaviour === 'string' ? `${behaviour}\n` : `delay ${behaviour.delaySeconds}\n`);
  }

  /** Every reboot the RebootProgram stand-in ran, in order. */
  rebootLog(): RebootLogEntry[] {
    let text: string;
    try {
      text = readFileSync(path.join(this.dir, 'reboots.log'), 'utf8');
    } catch {
      return [];
    }
    return text
      .split('\n')
      .map((line) => line.split(' '))
      .filter((words) => words.length === 3 && /^\d+$/.test(words[1]!))
      .map(([node, at, outcome]) => ({ node: node!, at: Number(at), outcome: outcome as RebootLogEntry['outcome'] }));
  }

  /** Reboots per node (every node listed, 0 when never rebooted). */
  rebootCounts(): Record<string, number> {
    const counts = Object.fromEntries(this.nodes.map((n) => [n, 0]));
    for (const entry of this.rebootLog()) counts[entry.node] = (counts[entry.node] ?? 0) + 1;
    return counts;
  }

  /** Stops the node's slurmd, as a node going down without Slurm asking (a reboot through another service, a crash). */
  async stopSlurmd(node: string): Promise<void> {
    await killByPidFile(path.join(this.dir, 'run', `slurmd-${node}.pid`), this.dir);
  }

  /** Starts the node's slurmd; `booted` (-b) reports a fresh boot (a new BootTime), as after a reboot. */
  async startSlurmd(node: string, options: { booted?: boolean } = {}): Promise<void> {
    if (!this.nodes.includes(node)) throw new Error(`no node ${node} in this cluster`);
    // As after a real boot, slurmd registers some time after the boot it reports (see writeCluster's HealthCheckProgram).
    if (options.booted) await writeFile(path.join(this.dir, 'control', `booting-${node}`), '');
    await this.run('slurmd', ['-f', this.conf, '-N', node, ...(options.booted ? ['-b'] : [])]);
  }

  /** Whether the node's own slurmd runs (its pid file names a live process). */
  slurmdRuns(node: string): boolean {
    try {
      process.kill(Number(readFileSync(path.join(this.dir, 'run', `slurmd-${node}.pid`), 'utf8').trim()), 0);
      return true;
    } catch {
      return false;
    }
  }

  /** Stops slurmctld and starts it again from its saved state (what `systemctl restart slurmctld` does). */
  async restartController(): Promise<void> {
    await killByPidFile(path.join(this.dir, 'run', 'slurmctld.pid'), this.dir);
    await this.startController({ clean: false });
  }

  /** `scontrol reconfigure`: slurmctld re-reads slurm.conf. */
  async reconfigure(): Promise<void> {
    await this.run('scontrol', ['reconfigure']);
  }

  /** A JWT for `user` from `scontrol token`. */
  async token(options: { user?: string; lifespanSeconds?: number } = {}): Promise<string> {
    const { stdout } = await this.run('scontrol', ['token', `username=${options.user ?? 'root'}`, `lifespan=${options.lifespanSeconds ?? 3600}`]);
    const token = /SLURM_JWT=(\S+)/.exec(stdout)?.[1];
    if (!token) throw new Error(`scontrol token printed no SLURM_JWT: ${stdout}`);
    return token;
  }

  /** A request to this cluster's slurmrestd, with a fresh token for root (unless `token` is given). */
  async restdRequest(
    pathname: string,
    init: { method?: string; body?: unknown; token?: string; user?: string } = {},
  ): Promise<{ status: number; body: unknown; text: string }> {
    if (!this.restd) throw new Error('this cluster runs no slurmrestd (restd: false)');
    const token = init.token ?? (await this.token({ user: init.user }));
    const response = await fetch(`${this.restd.url}${pathname}`, {
      method: init.method ?? 'GET',
      headers: {
        'X-SLURM-USER-NAME': init.user ?? 'root',
        'X-SLURM-USER-TOKEN': token,
        ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON (e.g. 405's plain text)
    }
    return { status: response.status, body, text };
  }

  /** slurmctld's RPC counters by type and user (see sdiag.ts). */
  async sdiag(): Promise<SdiagCounts> {
    return readSdiag(this.env);
  }

  async sdiagReset(): Promise<void> {
    await resetSdiag(this.env);
  }

  /** Leaves the cluster running when this process exits (a cluster started by hand); stop it with stopClusterDir. */
  keepAfterExit(): void {
    LIVE_CLUSTERS.delete(this);
  }

  /** The last lines of each log (slurmctld, slurmds, slurmrestd), for an error message. */
  logs(lines = 15): string {
    const dir = path.join(this.dir, 'log');
    let files: string[];
    try {
      files = readdirSync(dir).sort();
    } catch {
      return '';
    }
    return files
      .map((file) => {
        const text = readFileSync(path.join(dir, file), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
        return `--- ${path.join(dir, file)}\n${text}`;
      })
      .join('\n');
  }

  /**
   * What a failure about `node` needs to be understood: the RebootProgram stand-in's lines for it
   * (reboots.log and its restart log), whether its slurmd runs, the tail of its slurmd log and
   * slurmctld's lines naming it.
   */
  nodeDiagnostics(node: string, lines = 25): string {
    const read = (file: string) => {
      try {
        return readFileSync(path.join(this.dir, file), 'utf8').trimEnd().split('\n');
      } catch {
        return [`(no ${file})`];
      }
    };
    const tail = (text: string[]) => text.slice(-lines).join('\n');
    const pidFile = path.join(this.dir, 'run', `slurmd-${node}.pid`);
    let slurmd = 'no pid file';
    try {
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      slurmd = `pid ${pid} ${running(pid) && belongsTo(pid, this.dir) ? 'running' : 'not running'}`;
    } catch {
      // no pid file: stopped, or rebooting
    }
    const named = new RegExp(`\\b${node}\\b`);
    return [
      `--- ${node}: reboots.log (epoch seconds; now ${Math.floor(Date.now() / 1000)})`,
      tail(read('reboots.log').filter((line) => line.startsWith(`${node} `))) || '(no reboot)',
      `--- ${node}: slurmd ${slurmd}`,
      `--- ${path.join(this.dir, 'log', `reboot-${node}.log`)}`,
      tail(read(path.join('log', `reboot-${node}.log`))),
      `--- ${path.join(this.dir, 'log', `slurmd-${node}.log`)}`,
      tail(read(path.join('log', `slurmd-${node}.log`))),
      `--- ${path.join(this.dir, 'log', 'slurmctld.log')}, lines naming ${node}`,
      tail(read(path.join('log', 'slurmctld.log')).filter((line) => named.test(line))),
    ].join('\n');
  }

  /**
   * Stops everything this cluster started: slurmrestd, pending reboot restarts, slurmds and
   * slurmctld by their pid files, then any process still working inside the cluster's dir (job
   * steps, epilogs, RebootProgram runs); then removes the dir (unless keepDir).
   */
  async stop(options: { keepDir?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    LIVE_CLUSTERS.delete(this);
    await stopClusterDir(this.dir, { keepDir: options.keepDir ?? this.options.keepDir });
  }

  private async startController({ clean }: { clean: boolean }): Promise<void> {
    await this.run('slurmctld', ['-f', this.conf, ...(clean ? ['-c'] : [])]);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ping = await this.tryRun('scontrol', ['ping']);
      if (ping.code === 0 && /is UP/.test(ping.stdout)) return;
      if (Date.now() > deadline) throw new Error(`slurmctld did not answer within 20 s: ${ping.stdout}${ping.stderr}\n${this.logs()}`);
      await sleep(100);
    }
  }

  private async startRestd(): Promise<void> {
    const versions = await this.openapiVersions();
    const plugins = versions.plugins;
    const logFd = openSync(path.join(this.dir, 'log', 'slurmrestd.log'), 'a');
    const args = [
      '-f',
      this.conf,
      '-a',
      'rest_auth/jwt',
      '-s',
      plugins.join(','),
      ...(versions.dataParsers ? ['-d', versions.dataParsers.join(',')] : []),
      '-u',
      SLURMRESTD_USER,
      '-g',
      SLURMRESTD_USER,
      `127.0.0.1:${this.ports.restd}`,
    ];
    // SLURM_JWT=daemon: slurmrestd passes the client's token through to slurmctld (Slurm's jwt.shtml).
    const child = spawn('slurmrestd', args, {
      env: { ...this.env, SLURM_JWT: 'daemon' },
      detached: true,
      stdio: ['ignore', logFd, logFd],
      cwd: path.join(this.dir, 'log'),
    });
    closeSync(logFd);
    child.unref();
    if (child.pid === undefined) throw new Error('slurmrestd did not start');
    await writeFile(path.join(this.dir, 'run', 'slurmrestd.pid'), `${child.pid}\n`);
    this.restd = { url: `http://127.0.0.1:${this.ports.restd}`, versions: versions.served };
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        const answer = await fetch(`${this.restd.url}/openapi/v3`);
        await answer.arrayBuffer();
        return;
      } catch {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`slurmrestd did not answer on ${this.restd.url}\n${this.logs()}`);
        await sleep(100);
      }
    }
  }

  /**
   * The openapi versions slurmrestd offers here (`slurmrestd -s list`, `-d list`): up to 23.02 one
   * `openapi/v0.0.3x` plugin per version; from 23.11 `openapi/slurmctld` with a data_parser per version.
   */
  private async openapiVersions(): Promise<{ plugins: string[]; dataParsers?: string[]; served: string[] }> {
    const list = async (flag: string) => {
      const out = await this.tryRun('slurmrestd', ['-f', this.conf, '-u', SLURMRESTD_USER, '-g', SLURMRESTD_USER, flag, 'list']);
      return `${out.stdout}\n${out.stderr}`;
    };
    const openapi = await list('-s');
    const versioned = [...openapi.matchAll(/openapi\/(v\d+\.\d+\.\d+)\s*$/gm)].map((m) => m[1]!);
    if (versioned.length > 0) {
      const sorted = sortVersions(versioned);
      return { plugins: sorted.map((v) => `openapi/${v}`), served: sorted };
    }
    if (!/openapi\/slurmctld/.test(openapi)) throw new Error(`slurmrestd lists no openapi plugin for slurmctld:\n${openapi}`);
    const parsers = sortVersions([...(await list('-d')).matchAll(/data_parser\/(v\d+\.\d+\.\d+)/g)].map((m) => m[1]!));
    return { plugins: ['openapi/slurmctld'], dataParsers: parsers.map((v) => `data_parser/${v}`), served: parsers };
  }
}

function sortVersions(versions: string[]): string[] {
  const key = (v: string) => v.slice(1).split('.').map(Number);
  return [...new Set(versions)].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return 0;
  });
}

/** `scontrol --json` exists from Slurm 23.02. */
function jsonFromScontrol(version: string): boolean {
  const [major, minor] = version.split('.').map(Number);
  return major! > 23 || (major === 23 && minor! >= 2);
}

/** The command that prints every node as JSON on this Slurm release: `scontrol --json show node` from 23.02, `sinfo --json` before. */
export function nodesCommand(version: string): string[] {
  return jsonFromScontrol(version) ? ['scontrol', '--json', 'show', 'node'] : ['sinfo', '--json'];
}

/** What `nodesCommand(version)` printed, as nodes. */
export function parseNodes(version: string, stdout: string): RealNode[] {
  if (jsonFromScontrol(version)) return (JSON.parse(stdout) as { nodes: ScontrolJsonNode[] }).nodes.map(fromScontrolJson);
  return (JSON.parse(stdout) as { nodes: SinfoV38Node[] }).nodes.map(fromSinfoV38);
}

interface SinfoV38Node {
  name: string;
  state: string;
  state_flags?: string[];
  reason?: string;
  features?: string;
  active_features?: string;
  boot_time?: number;
}

interface ScontrolJsonNode {
  name: string;
  state: string[];
  reason?: string;
  features?: string[] | string;
  active_features?: string[] | string;
  boot_time?: number | { number: number };
}

const BASE_STATES = ['UNKNOWN', 'DOWN', 'IDLE', 'ALLOCATED', 'ERROR', 'MIXED', 'FUTURE'];

function list(value: string[] | string | undefined): string[] {
  if (Array.isArray(value)) return value;
  return (value ?? '').split(',').filter(Boolean);
}

/** openapi v0.0.38 (sinfo --json on 22.05): `state` the base in lowercase, `state_flags` the rest. */
function fromSinfoV38(node: SinfoV38Node): RealNode {
  return {
    name: node.name,
    base: node.state.toUpperCase(),
    flags: [...(node.state_flags ?? [])].map((f) => f.toUpperCase()).sort(),
    reason: node.reason ?? '',
    features: list(node.features),
    activeFeatures: list(node.active_features),
    bootTime: node.boot_time ?? 0,
  };
}

/** data_parser v0.0.39+ (scontrol --json): `state` a list, the base first. */
function fromScontrolJson(node: ScontrolJsonNode): RealNode {
  const base = node.state.find((s) => BASE_STATES.includes(s)) ?? node.state[0] ?? 'UNKNOWN';
  const boot = typeof node.boot_time === 'number' ? node.boot_time : (node.boot_time?.number ?? 0);
  return {
    name: node.name,
    base,
    flags: node.state.filter((s) => s !== base).sort(),
    reason: node.reason ?? '',
    features: list(node.features),
    activeFeatures: list(node.active_features),
    bootTime: boot,
  };
}

/**
 * Ports for a cluster's daemons, free when picked. They are drawn at random below the kernel's
 * ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by default), where the outgoing
 * connections of every other test take theirs: a port from that range could be taken by one before a
 * slurmd binds it. Two clusters started at once could still draw the same port: the one that loses
 * fails to bind, which boot() sees (see RealSlurmCluster.start's retries).
 */
const CLUSTER_PORTS = { from: 10_000, to: 32_000 };

async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = CLUSTER_PORTS.from + Math.floor(Math.random() * (CLUSTER_PORTS.to - CLUSTER_PORTS.from));
    if (!ports.includes(port) && (await portIsFree(port))) ports.push(port);
  }
  return ports;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

async function writeCluster(options: {
  nodes: number;
  nodePrefix: string;
  slurmdTimeout: number;
  resumeTimeout: number;
  returnToService: number;
  rebootDelaySeconds: number;
  maxTimeMinutes: number;
  repoDir: string;
  features?: Readonly<Record<string, readonly string[]>>;
  partitions?: readonly PartitionSpec[];
}): Promise<ClusterLayout> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'real-slurm-'));
  // slurmrestd reads slurm.conf as an unprivileged user.
  await chmod(dir, 0o755);
  for (const sub of ['state', 'spool', 'log', 'run', 'control', 'jobs']) await mkdir(path.join(dir, sub));
  const nodes = Array.from({ length: options.nodes }, (_, i) => `${options.nodePrefix}${String(i + 1).padStart(2, '0')}`);
  for (const name of Object.keys(options.features ?? {})) if (!nodes.includes(name)) throw new Error(`features name an unknown node '${name}'`);
  const [controller, restd, ...nodePorts] = await freePorts(nodes.length + 2);
  const host = os.hostname().split('.')[0]!;
  const conf = path.join(dir, 'slurm.conf');
  const jwtKey = path.join(dir, 'jwt.key');
  await writeFile(jwtKey, randomBytes(32), { mode: 0o600 });
  const rebootProgram = path.join(dir, 'reboot-program');
  await writeFile(
    rebootProgram,
    `#!/bin/sh\nexec /bin/sh ${shellQuote(path.join(options.repoDir, 'scripts', 'slurm', 'reboot-program.sh'))} ${shellQuote(dir)}\n`,
    { mode: 0o755 },
  );
  const control = shellQuote(path.join(dir, 'control'));
  const epilog = path.join(dir, 'epilog');
  await writeFile(
    epilog,
    [
      '#!/bin/sh',
      '# Sleeps as long as control/epilog-<node> says, then waits while control/epilog-hold-<node> exists (10 minutes at most):',
      '# a test sees the node COMPLETING meanwhile.',
      `sleep "$(cat ${control}/epilog-"$SLURMD_NODENAME" 2>/dev/null || echo 0)"`,
      'i=0',
      `while [ -e ${control}/epilog-hold-"$SLURMD_NODENAME" ] && [ $i -lt 3000 ]; do sleep 0.2; i=$((i + 1)); done`,
      'exit 0',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const healthCheck = path.join(dir, 'health-check');
  await writeFile(
    healthCheck,
    [
      '#!/bin/sh',
      '# slurmd runs HealthCheckProgram as it starts, before it registers. After a reboot (control/booting-<node>, written by',
      '# the RebootProgram stand-in and startSlurmd({ booted })) it lets the clock turn two whole seconds first, as a real',
      "# node's slurmd registers a while after its boot: slurmctld takes the boot as (now - uptime) in whole seconds, and a",
      '# slurmd that reports its start as its boot (-b) and registers within that same second can, at its next registration,',
      '# seem to have booted after it last answered: "Node unexpectedly rebooted" (node_mgr.c validate_node_specs).',
      `flag=${control}/booting-"$SLURMD_NODENAME"`,
      '[ -e "$flag" ] || exit 0',
      'rm -f "$flag"',
      'until=$(($(date +%s) + 2))',
      'while [ "$(date +%s)" -lt "$until" ]; do sleep 0.1; done',
      'exit 0',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  await writeFile(path.join(dir, 'reboot-delay'), `${options.rebootDelaySeconds}\n`);
  const partitions = options.partitions ?? [{ name: 'batch', default: true }];
  const lines = [
    `# A real Slurm cluster on one machine, written by test/support/real-slurm.ts`,
    `ClusterName=rt${randomBytes(3).toString('hex')}`,
    `SlurmctldHost=${host}(127.0.0.1)`,
    `SlurmctldPort=${controller}`,
    'SlurmUser=root',
    'SlurmdUser=root',
    'AuthType=auth/munge',
    'AuthAltTypes=auth/jwt',
    `AuthAltParameters=jwt_key=${jwtKey}`,
    `StateSaveLocation=${dir}/state`,
    `SlurmdSpoolDir=${dir}/spool/%n`,
    `SlurmctldPidFile=${dir}/run/slurmctld.pid`,
    `SlurmdPidFile=${dir}/run/slurmd-%n.pid`,
    `SlurmctldLogFile=${dir}/log/slurmctld.log`,
    `SlurmdLogFile=${dir}/log/slurmd-%n.log`,
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'SelectType=select/cons_tres',
    'SchedulerType=sched/backfill',
    'MpiDefault=none',
    'JobCompType=jobcomp/none',
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    'KillWait=2',
    // A job not started at submission waits for the next pass of the main scheduler: every 5 s instead of 60.
    'SchedulerParameters=sched_interval=5',
    // Debug level: a failure's message carries the daemons' lines about its node ("Still waiting for boot", registration retries).
    'SlurmctldDebug=debug',
    'SlurmdDebug=debug',
    `HealthCheckProgram=${healthCheck}`,
    // slurmd runs it as it starts; slurmctld would ask for it only after this long (18 hours, the most it takes).
    'HealthCheckInterval=65535',
    `SlurmdTimeout=${options.slurmdTimeout}`,
    `ResumeTimeout=${options.resumeTimeout}`,
    `ReturnToService=${options.returnToService}`,
    `RebootProgram=${rebootProgram}`,
    `Epilog=${epilog}`,
    ...nodes.map((name, i) => {
      const features = options.features?.[name];
      return `NodeName=${name} NodeHostname=${host} NodeAddr=127.0.0.1 Port=${nodePorts[i]} CPUs=1 RealMemory=1${features && features.length > 0 ? ` Feature=${features.join(',')}` : ''} State=UNKNOWN`;
    }),
    ...partitions.map(
      (p) =>
        `PartitionName=${p.name} Nodes=${p.nodes ? p.nodes.join(',') : 'ALL'}${p.default ? ' Default=YES' : ''} MaxTime=${options.maxTimeMinutes} State=UP`,
    ),
  ];
  await writeFile(conf, `${lines.join('\n')}\n`, { mode: 0o644 });
  return { dir, conf, nodes, ports: { controller: controller!, restd: restd!, nodes: nodePorts } };
}

/**
 * Stops the process a pid file names, if it still runs and works inside `dir` (a pid reused by
 * another process is left alone): SIGTERM, as a daemon is stopped on a site, then SIGKILL after 3 s.
 */
async function killByPidFile(file: string, dir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(file, 'utf8').trim());
  } catch {
    return;
  }
  if (Number.isInteger(pid) && pid > 1 && belongsTo(pid, dir)) await killAndWait([pid], { graceful: true });
  rmSync(file, { force: true });
}

/** The process was started for the cluster in `dir`: its command line or working directory names the dir. */
function belongsTo(pid: number, dir: string): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (cmdline.includes(dir)) return true;
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    return cwd === dir || cwd.startsWith(`${dir}/`);
  } catch {
    return false;
  }
}

/** Every process working for the cluster in `dir`: its daemons and reboot restarts name the dir; slurmstepd, jobs and epilogs run in it. */
function processesInside(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    if (belongsTo(pid, dir) && running(pid)) pids.push(pid);
  }
  return pids;
}

/** SIGKILL to everything working for the cluster (a cluster being thrown away needs no graceful stop), until none is left. */
async function killInside(dir: string): Promise<void> {
  for (let round = 0; round < 20; round++) {
    const pids = processesInside(dir);
    if (pids.length === 0) return;
    await killAndWait(pids, { graceful: false });
  }
  throw new Error(`processes of the cluster in ${dir} survived SIGKILL: ${processesInside(dir).join(', ')}`);
}

/** Signals each process (graceful: SIGTERM, then SIGKILL after 3 s; else SIGKILL) and waits until it is gone (a zombie counts as gone). */
async function killAndWait(pids: number[], { graceful }: { graceful: boolean }): Promise<void> {
  const signal = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  };
  for (const pid of pids) signal(pid, graceful ? 'SIGTERM' : 'SIGKILL');
  let alive = pids.filter(running);
  if (graceful) {
    const deadline = Date.now() + 3_000;
    while (alive.length > 0 && Date.now() < deadline) {
      await sleep(20);
      alive = alive.filter(running);
    }
    for (const pid of alive) signal(pid, 'SIGKILL');
  }
  // SIGKILL cannot be ignored; a process still there after 10 s is stuck in the kernel: say so, do not wait for ever.
  const killDeadline = Date.now() + 10_000;
  while (alive.length > 0 && Date.now() < killDeadline) {
    await sleep(20);
    alive = alive.filter(running);
  }
  if (alive.length > 0) throw new Error(`processes ${alive.join(', ')} did not end after SIGKILL`);
}

function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state letter follows the parenthesised command name.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** A process that exits with clusters still up (a test that forgot stop(), Ctrl-C) takes them down with it, by pid. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const cluster of LIVE_CLUSTERS) {
      for (const pid of processesInside(cluster.dir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The cluster a developer started by hand (`npm run slurm:start`) is recorded here, for `npm run slurm:stop`. */
export function handStartedClusterFile(repoDir = DEFAULT_REPO_DIR): string {
  return path.join(repoDir, '.real-slurm', 'cluster.json');
}

/** Stops a cluster by its dir (what `npm run slurm:stop` does for one started by hand). */
export async function stopClusterDir(dir: string, options: { keepDir?: boolean } = {}): Promise<void> {
  if (!existsSync(path.join(dir, 'slurm.conf'))) throw new Error(`${dir} is not a real-Slurm cluster dir (no slurm.conf)`);
  // Reboot restarters first (they would start a slurmd again), then the rest at once.
  const run = path.join(dir, 'run');
  const restarters = existsSync(run) ? readdirSync(run).filter((f) => f.startsWith('reboot-') && f.endsWith('.pid')) : [];
  const pids = restarters
    .map((f) => Number(readFileSync(path.join(run, f), 'utf8').trim()))
    .filter((pid) => Number.isInteger(pid) && pid > 1 && belongsTo(pid, dir));
  await killAndWait(pids, { graceful: false });
  await killInside(dir);
  if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
}
