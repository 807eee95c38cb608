/**
 * A real Slurm cluster on this one machine, for tests (test/support/describe-real-slurm.ts), the
 * benchmarks and scenarios (bench/) and by hand (`npm run slurm:start`, scripts/slurm/cluster.ts): one
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
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
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

/**
 * The Slurm releases the suite runs for real: Debian 12's 22.05, Debian 13's 24.11 and Debian sid's 26.05.
 * The host's own release runs on the host; the others in a chroot of Debian's packages
 * (scripts/slurm/chroot.sh), where everything of a cluster runs: its munged, slurmctld, slurmds, slurmrestd.
 */
export const REAL_SLURM_RELEASES = ['22.05', '24.11', '26.05'] as const;
export type RealSlurmRelease = (typeof REAL_SLURM_RELEASES)[number];

/** Where the chroots are cached (scripts/slurm/chroot.sh's SLURM_CHROOT_CACHE). */
const CHROOT_CACHE = process.env.SLURM_CHROOT_CACHE ?? '/var/cache/baremetal-rollout';

/** The chroot of a release (built by `scripts/slurm/chroot.sh build RELEASE`). */
export function slurmChroot(release: RealSlurmRelease): string {
  return path.join(CHROOT_CACHE, `slurm-${release}`);
}

let hostReleaseSeen: string | undefined | null = null;

/** MAJOR.MINOR of the Slurm installed on the host (`scontrol --version`), undefined when none is. */
export function hostSlurmRelease(): string | undefined {
  if (hostReleaseSeen !== null) return hostReleaseSeen;
  hostReleaseSeen = undefined;
  const scontrol = SBIN_PATH.split(':')
    .map((dir) => path.join(dir, 'scontrol'))
    .find((file) => existsSync(file));
  if (scontrol) {
    // scontrol reads a slurm.conf even for --version: a minimal one.
    const conf = path.join(os.tmpdir(), `real-slurm-version-${process.pid}.conf`);
    try {
      writeFileSync(conf, 'ClusterName=version\nSlurmctldHost=localhost\n');
      const printed = execFileSync(scontrol, ['--version'], { encoding: 'utf8', env: { ...process.env, SLURM_CONF: conf }, stdio: ['ignore', 'pipe', 'pipe'] });
      hostReleaseSeen = /(\d+\.\d+)\.\d+/.exec(printed)?.[1];
    } catch {
      // not runnable
    } finally {
      rmSync(conf, { force: true });
    }
  }
  return hostReleaseSeen;
}

/** Whether the release runs from a chroot here (it is not the host's own). */
function inChroot(release: RealSlurmRelease | undefined): release is RealSlurmRelease {
  return release !== undefined && hostSlurmRelease() !== release;
}

/**
 * The releases the real-Slurm suites run: `REAL_SLURM_RELEASES` (comma-separated, e.g. `24.11` or
 * `22.05,26.05`), else every release (those that cannot run here skip, saying why).
 */
export function realSlurmReleases(): RealSlurmRelease[] {
  const asked = process.env.REAL_SLURM_RELEASES?.split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  if (!asked || asked.length === 0) return [...REAL_SLURM_RELEASES];
  const unknown = asked.filter((r) => !(REAL_SLURM_RELEASES as readonly string[]).includes(r));
  if (unknown.length > 0) throw new Error(`REAL_SLURM_RELEASES names ${unknown.join(', ')}: one or more of ${REAL_SLURM_RELEASES.join(', ')}`);
  return asked as RealSlurmRelease[];
}

const unavailableReasons = new Map<string, string | undefined>();

/**
 * Why a real Slurm (of `release`; default the host's) cannot run here (undefined: it can). Checked once
 * per process and release: Linux, root (slurmd and the reboot stand-in need it), the Slurm and munge
 * commands, the jwt plugin and slurmrestd's user; for a release other than the host's, its chroot.
 */
export function realSlurmUnavailable(release?: RealSlurmRelease): string | undefined {
  const key = release ?? 'host';
  if (!unavailableReasons.has(key)) unavailableReasons.set(key, inChroot(release) ? findChrootUnavailableReason(release) : findUnavailableReason());
  return unavailableReasons.get(key);
}

function findChrootUnavailableReason(release: RealSlurmRelease): string | undefined {
  if (process.platform !== 'linux') return `a real Slurm runs on Linux only (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return `Slurm ${release} runs in a chroot, which needs root`;
  const root = slurmChroot(release);
  const build = `build it (as root, about 30 s): scripts/slurm/chroot.sh build ${release}`;
  if (!existsSync(path.join(root, '.baremetal-rollout-slurm'))) return `no Slurm ${release} chroot at ${root}: ${build}`;
  const missing = ['usr/sbin/slurmctld', 'usr/sbin/slurmd', 'usr/sbin/slurmrestd', 'usr/bin/scontrol', 'usr/sbin/munged'].filter(
    (file) => !existsSync(path.join(root, file)),
  );
  if (missing.length > 0) return `the Slurm ${release} chroot at ${root} lacks ${missing.join(', ')}: ${build}`;
  if (!jwtPluginInstalled(root)) return `the Slurm ${release} chroot at ${root} has no auth_jwt.so: ${build}`;
  return undefined;
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
  if (!jwtPluginInstalled('/')) return `Slurm's auth/jwt plugin (auth_jwt.so) is not installed: ${install}`;
  return undefined;
}

function onPath(command: string): boolean {
  return SBIN_PATH.split(':').some((dir) => existsSync(path.join(dir, command)));
}

function jwtPluginInstalled(under: string): boolean {
  const roots = ['/usr/lib', '/usr/lib64', '/usr/local/lib'].map((dir) => path.join(under, dir));
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
 * The shortest SlurmdTimeout a test may give a cluster of `release` and still see only the nodes it stopped go
 * DOWN. From 24.11 slurmctld's ping agent for every node waits about 11 s on a slurmd that is gone (connection
 * retries, seen on 24.11.5), and pings no node again meanwhile: under a shorter SlurmdTimeout the healthy nodes
 * of that agent are set DOWN `Not responding` too. 22.05 gives up at once.
 */
export function shortSlurmdTimeout(release: RealSlurmRelease | undefined): number {
  return (release ?? hostSlurmRelease()) === '22.05' ? 6 : 20;
}

export interface PartitionSpec {
  name: string;
  /** Node names; every node when absent. */
  nodes?: readonly string[];
  default?: boolean;
}

export interface RealSlurmOptions {
  /** The Slurm release (default: the host's). Another release than the host's runs in its chroot (scripts/slurm/chroot.sh). */
  release?: RealSlurmRelease;
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
  /**
   * The cluster's first port: slurmctld on it, slurmrestd on the next, the slurmds on those after
   * (`npm run slurm:start -- --port-base N`). Default: free ports drawn at random (see freePorts).
   */
  portBase?: number;
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
  /** The dir as the kernel names it: inside the chroot for a release that runs there (`dir` is a link to it), else `dir`. */
  realDir: string;
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
  /** The release asked for (undefined: the host's). */
  readonly release?: RealSlurmRelease;
  /** The chroot the cluster runs in (undefined: on the host). */
  readonly root?: string;
  restd?: RestdInfo;
  private stopped = false;

  private constructor(
    layout: ClusterLayout,
    private readonly options: Required<Omit<RealSlurmOptions, 'features' | 'partitions' | 'repoDir' | 'release' | 'portBase'>> &
      Pick<RealSlurmOptions, 'features' | 'partitions' | 'release' | 'portBase'> & { repoDir: string; root?: string },
  ) {
    this.dir = layout.dir;
    this.conf = layout.conf;
    this.nodes = layout.nodes;
    this.ports = layout.ports;
    this.release = options.release;
    this.root = options.root;
    // The cluster's bin/ first: its Slurm commands (the chroot's, through `chroot`, for another release), for the
    // tests and for the product's connectors alike (they find scontrol, sinfo and squeue on PATH).
    this.env = { ...process.env, SLURM_CONF: layout.conf, PATH: `${path.join(layout.dir, 'bin')}:${process.env.PATH ?? ''}:${SBIN_PATH}` };
  }

  private readonly ports: ClusterLayout['ports'];

  /** Starts a cluster and waits until every node is idle (a few seconds). Throws with the reason when it cannot. */
  static async start(options: RealSlurmOptions = {}): Promise<RealSlurmCluster> {
    const reason = realSlurmUnavailable(options.release);
    if (reason) throw new Error(`cannot start a real Slurm${options.release ? ` ${options.release}` : ''}: ${reason}`);
    const root = inChroot(options.release) ? slurmChroot(options.release) : undefined;
    const resolved = {
      release: options.release,
      root,
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
      portBase: options.portBase,
    };
    if (!Number.isInteger(resolved.nodes) || resolved.nodes < 1 || resolved.nodes > 99)
      throw new Error(`nodes must be a whole number from 1 to 99, not ${resolved.nodes}`);
    if (!/^[a-z][a-z0-9-]*$/.test(resolved.nodePrefix))
      throw new Error(`nodePrefix must be lowercase letters, digits and '-', starting with a letter: '${resolved.nodePrefix}'`);
    // munge: the host's (one per machine), or the chroot's own (its key and socket under it), with /proc and /sys mounted there.
    const scripts = path.join(resolved.repoDir, 'scripts', 'slurm');
    await execFileAsync('sh', root ? [path.join(scripts, 'chroot.sh'), 'up', options.release!] : [path.join(scripts, 'munge.sh')], {
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
        // Ports given are the same on every try: only drawn ones change.
        if (!portClash || resolved.portBase !== undefined) break;
      }
    }
    throw lastError;
  }

  private async boot(): Promise<void> {
    this.version = (await this.run('scontrol', ['--version'])).stdout.trim().replace(/^slurm(-wlm)?\s+/, '');
    if (this.release && !this.version.startsWith(`${this.release}.`))
      throw new Error(`asked for Slurm ${this.release}, found ${this.version}${this.root ? ` in ${this.root}` : ' on the host'}`);
    await this.startRebooter();
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
  async run(
    command: string,
    args: readonly string[],
    options: { timeoutMs?: number; env?: Record<string, string> } = {},
  ): Promise<{ stdout: string; stderr: string }> {
    try {
      return await execFileAsync(command, args, { env: { ...this.env, ...options.env }, timeout: options.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024 });
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
    this.stoppedAt.set(node, Date.now());
  }

  /** Starts the node's slurmd; `booted` (-b) reports a fresh boot (a new BootTime), as after a reboot. */
  async startSlurmd(node: string, options: { booted?: boolean } = {}): Promise<void> {
    if (!this.nodes.includes(node)) throw new Error(`no node ${node} in this cluster`);
    if (!options.booted) {
      await this.run('slurmd', ['-f', this.conf, '-N', node]);
      return;
    }
    // As after a real boot, slurmd registers a while after the boot it reports. From 24.11 slurmd -b takes that boot
    // from SLURMD_BOOT_TIME (slurmd.c): ten seconds before now, never within three seconds of slurmd's stop (a boot before
    // the node last answered is no reboot to slurmctld), slurmd started two whole seconds after it at least, registering
    // at once.
    // slurmctld takes a registration's boot as (its now - the uptime slurmd sent), so a registration delayed past the
    // boot's lead over the node's last answer reads as a second boot: seen on 24.11 under load, a RESUME a second after
    // a boot reported 2 s before the registration, then a registration 5 s late, "Node unexpectedly rebooted"
    // (validate_node_specs) under ReturnToService=0. Not by holding slurmd in its HealthCheckProgram, as 22.05 must
    // (writeCluster): slurmd listens before that runs, so a ping slurmctld sends meanwhile is answered alongside the
    // registration, and when that answer is taken first the reboot is missed (the node stays IDLE where
    // ReturnToService=0 sets it DOWN; seen once on 24.11 under CI load).
    if ((this.release ?? hostSlurmRelease()) === '22.05') {
      await writeFile(path.join(this.dir, 'control', `booting-${node}`), '');
      await this.run('slurmd', ['-f', this.conf, '-N', node, '-b']);
      return;
    }
    // Its slurmd stopped last here (stopSlurmd) or by the RebootProgram stand-in (its log, in epoch seconds).
    const stopped = Math.max(
      Math.floor((this.stoppedAt.get(node) ?? 0) / 1000),
      ...this.rebootLog()
        .filter((entry) => entry.node === node)
        .map((entry) => entry.at),
    );
    // Three seconds after the stop: slurmctld may take the answer to a ping slurmd sent as it stopped a second or two
    // later (last_response is when it is taken; seen on 26.05 with 1 s: the reboot missed).
    const boot = Math.max(Math.floor(Date.now() / 1000) - 10, stopped + 3);
    while (Math.floor(Date.now() / 1000) < boot + 2) await new Promise((resolve) => setTimeout(resolve, 100));
    await this.run('slurmd', ['-f', this.conf, '-N', node, '-b'], { env: { SLURMD_BOOT_TIME: String(boot) } });
  }

  /** When each node's slurmd was last stopped (stopSlurmd), epoch ms. */
  private readonly stoppedAt = new Map<string, number>();

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

  /** The cluster's rebooter (scripts/slurm/rebooter.sh): carries out the reboots the RebootProgram stand-in records. */
  private async startRebooter(): Promise<void> {
    const logFd = openSync(path.join(this.dir, 'log', 'rebooter.log'), 'a');
    const child = spawn('/bin/sh', [path.join(this.dir, 'rebooter.sh'), this.dir], {
      env: this.env,
      detached: true,
      stdio: ['ignore', logFd, logFd],
      cwd: this.dir,
    });
    closeSync(logFd);
    child.unref();
    if (child.pid === undefined) throw new Error('the rebooter did not start');
    await writeFile(path.join(this.dir, 'run', 'rebooter.pid'), `${child.pid}\n`);
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

/** `count` ports from `base` on, each free now; else an error naming the first that is not. */
async function givenPorts(base: number, count: number): Promise<number[]> {
  const ports = Array.from({ length: count }, (_, i) => base + i);
  if (ports.at(-1)! > 65535) throw new Error(`ports ${base}..${ports.at(-1)} go past 65535: give a lower port base`);
  for (const port of ports) if (!(await portIsFree(port))) throw new Error(`port ${port} (of ${base}..${ports.at(-1)}) is in use: give another port base`);
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
  release?: RealSlurmRelease;
  root?: string;
  features?: Readonly<Record<string, readonly string[]>>;
  partitions?: readonly PartitionSpec[];
  portBase?: number | undefined;
}): Promise<ClusterLayout> {
  const { dir, realDir } = await clusterDir(options.root);
  // slurmrestd reads slurm.conf as an unprivileged user.
  await chmod(realDir, 0o755);
  for (const sub of ['state', 'spool', 'log', 'run', 'control', 'jobs', 'bin', 'reboot-requests']) await mkdir(path.join(dir, sub));
  await writeCommands(path.join(dir, 'bin'), options.root);
  // 24.11 and later refuse to start slurmd with no cgroup filesystem, even with proctrack/linuxproc (REFERENCE.md).
  if (options.release && options.release >= '24.11') await writeFile(path.join(dir, 'cgroup.conf'), 'CgroupPlugin=disabled\n', { mode: 0o644 });
  // The RebootProgram runs under slurmd (in the chroot, for another release): a copy inside the cluster's dir.
  await copyFile(path.join(options.repoDir, 'scripts', 'slurm', 'reboot-program.sh'), path.join(dir, 'reboot-program.sh'));
  await copyFile(path.join(options.repoDir, 'scripts', 'slurm', 'rebooter.sh'), path.join(dir, 'rebooter.sh'));
  const nodes = Array.from({ length: options.nodes }, (_, i) => `${options.nodePrefix}${String(i + 1).padStart(2, '0')}`);
  for (const name of Object.keys(options.features ?? {})) if (!nodes.includes(name)) throw new Error(`features name an unknown node '${name}'`);
  const [controller, restd, ...nodePorts] =
    options.portBase === undefined ? await freePorts(nodes.length + 2) : await givenPorts(options.portBase, nodes.length + 2);
  const host = os.hostname().split('.')[0]!;
  const conf = path.join(dir, 'slurm.conf');
  const jwtKey = path.join(dir, 'jwt.key');
  await writeFile(jwtKey, randomBytes(32), { mode: 0o600 });
  const rebootProgram = path.join(dir, 'reboot-program');
  await writeFile(rebootProgram, `#!/bin/sh\nexec /bin/sh ${shellQuote(path.join(dir, 'reboot-program.sh'))} ${shellQuote(dir)}\n`, { mode: 0o755 });
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
      '# the RebootProgram stand-in and, on 22.05, startSlurmd({ booted })) it lets the clock turn two whole seconds first, as a real',
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
    `# A real Slurm cluster on one machine, written by scripts/slurm/real-slurm.ts`,
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
  return { dir, realDir, conf, nodes, ports: { controller: controller!, restd: restd!, nodes: nodePorts } };
}

/**
 * A new cluster dir. For a release in a chroot it is made inside the chroot at the path it has on the host
 * (`<root>/tmp/real-slurm-XXXX`), and that host path is a link to it: slurm.conf's paths then name the same
 * files inside the chroot (the daemons) and outside (the tests, the rebooter).
 */
async function clusterDir(root: string | undefined): Promise<{ dir: string; realDir: string }> {
  if (!root) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'real-slurm-'));
    return { dir, realDir: dir };
  }
  const hostTmp = realpathSync(os.tmpdir());
  for (let attempt = 0; ; attempt++) {
    await mkdir(path.join(root, hostTmp), { recursive: true, mode: 0o1777 });
    const realDir = await mkdtemp(path.join(root, hostTmp, 'real-slurm-'));
    const dir = path.join(hostTmp, path.basename(realDir));
    try {
      symlinkSync(realDir, dir);
      return { dir, realDir };
    } catch (err) {
      rmSync(realDir, { recursive: true, force: true });
      if (attempt >= 5) throw err;
    }
  }
}

/** The Slurm commands the cluster's `bin/` offers: daemons and clients, the host's or (through `chroot`) the chroot's. */
const CLUSTER_COMMANDS: Record<string, 'bin' | 'sbin'> = {
  slurmctld: 'sbin',
  slurmd: 'sbin',
  slurmrestd: 'sbin',
  scontrol: 'bin',
  sinfo: 'bin',
  squeue: 'bin',
  sbatch: 'bin',
  scancel: 'bin',
  sdiag: 'bin',
  strigger: 'bin',
  srun: 'bin',
};

/**
 * One wrapper a command: `exec chroot ROOT /usr/bin/scontrol "$@"` for a release in a chroot (SLURM_CONF and
 * the rest of the environment pass through), `exec /usr/bin/scontrol "$@"` on the host. Run inside the chroot
 * (a job's PATH is its submitter's) the chroot's own command is run.
 */
async function writeCommands(bin: string, root: string | undefined): Promise<void> {
  for (const [command, where] of Object.entries(CLUSTER_COMMANDS)) {
    let body: string;
    if (root) {
      const inside = `/usr/${where}/${command}`;
      body = `if [ -d ${shellQuote(root)} ]; then exec chroot ${shellQuote(root)} ${inside} "$@"; fi\nexec ${inside} "$@"`;
    } else {
      const found = SBIN_PATH.split(':')
        .map((dir) => path.join(dir, command))
        .find((file) => existsSync(file));
      if (!found) continue;
      body = `exec ${shellQuote(found)} "$@"`;
    }
    await writeFile(path.join(bin, command), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  }
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

/**
 * The process was started for the cluster in `dir`: its command line or working directory names the dir
 * (or, for a cluster in a chroot, the dir the link `dir` points to: how the kernel names a chrooted cwd).
 */
function belongsTo(pid: number, dir: string): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (cmdline.includes(dir)) return true;
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    return [dir, resolvedDir(dir)].some((d) => cwd === d || cwd.startsWith(`${d}/`));
  } catch {
    return false;
  }
}

const resolvedDirs = new Map<string, string>();

/** Where `dir` really is (a chroot cluster's dir is a link), remembered: the link goes before the last processes do. */
function resolvedDir(dir: string): string {
  let real = resolvedDirs.get(dir);
  if (real === undefined) {
    try {
      real = realpathSync(dir);
    } catch {
      real = dir;
    }
    resolvedDirs.set(dir, real);
  }
  return real;
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
  resolvedDir(dir);
  const run = path.join(dir, 'run');
  const restarters = existsSync(run) ? readdirSync(run).filter((f) => (f.startsWith('reboot-') || f === 'rebooter.pid') && f.endsWith('.pid')) : [];
  const pids = restarters
    .map((f) => Number(readFileSync(path.join(run, f), 'utf8').trim()))
    .filter((pid) => Number.isInteger(pid) && pid > 1 && belongsTo(pid, dir));
  await killAndWait(pids, { graceful: false });
  await killInside(dir);
  if (!options.keepDir) {
    const real = resolvedDir(dir);
    rmSync(real, { recursive: true, force: true });
    if (real !== dir) rmSync(dir, { force: true });
  }
}
