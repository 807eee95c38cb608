import type { SiteNode, SiteWlmState, SiteWorkload } from '../site-file';
import { SimRequestError } from '../errors';
import type { Timeline } from '../timeline';
import { cappedLognormalMean, exponential, lognormal, randomStream, type Random } from '../seeded-random';
import type { SiteTaskObserver } from './task-runner';
import type { NodeChangeLog } from './node-changes';

export type WlmBase = 'IDLE' | 'ALLOCATED' | 'MIXED' | 'COMPLETING' | 'DOWN';

/** What `sinfo`/`scontrol show node` print, `*` appended when the node does not respond. */
export type WlmDisplayState = 'IDLE' | 'ALLOCATED' | 'MIXED' | 'COMPLETING' | 'DRAINING' | 'DRAINED' | 'DOWN' | 'FAIL' | 'FAILING';

export interface WlmNodeSnapshot {
  name: string;
  base: WlmBase;
  /** Slurm flags in slurmrestd's order: DRAIN, FAIL, NOT_RESPONDING. */
  flags: string[];
  /** e.g. `DRAINED`, `DOWN*`, `FAILING`. */
  display: string;
  reason?: string;
  /** When slurmd last registered after a boot, epoch ms; undefined if never. */
  bootTime?: number;
  drainCount: number;
  resumeCount: number;
  failCount: number;
  /** Jobs killed by a reboot: the proof that a workflow rebooted a busy node. */
  killedJobs: number;
}

interface NodeState {
  name: string;
  base: WlmBase;
  drain: boolean;
  fail: boolean;
  responding: boolean;
  reason?: string;
  bootTime?: number;
  /** End of the running job (Infinity: no end); undefined when the node runs no job. */
  jobEndsAt?: number;
  /** Bumped by every reboot, so the registration of a superseded boot is ignored. */
  bootGeneration: number;
  /** `scontrol reboot`: asked (waiting for the node to be idle) or under way. */
  rebootPending?: 'REBOOT_REQUESTED' | 'REBOOT_ISSUED';
  drainCount: number;
  resumeCount: number;
  failCount: number;
  killedJobs: number;
  /** The node's own stream of job gaps and lengths (with a workload). */
  random?: Random;
  /** Bumped by every scheduled job arrival, so a superseded arrival is ignored. */
  arrivalGeneration: number;
  /** Closed out-of-service intervals, epoch ms. */
  outOfService: [number, number][];
  /** Start of the open out-of-service interval. */
  outSince?: number;
  /** The first job's remaining seconds at the start (null: a job that never ends). */
  initialBusySeconds: number | null;
}

/** What the site state reports of a node's service, in simulated seconds from the simulator's start. */
export interface ServiceRecord {
  initialBusySeconds: number | null;
  /** [start, end]; end is null while the node is still out of service. */
  outOfService: [number, number | null][];
}

const BUSY_BASES: readonly WlmBase[] = ['ALLOCATED', 'MIXED', 'COMPLETING'];

/** The site file's sinfo-style states as slurmctld holds them: a base state, flags, and whether a job runs. */
const FROM_SITE_STATE: Record<SiteWlmState, { base: WlmBase; drain: boolean; fail: boolean; busy: boolean }> = {
  IDLE: { base: 'IDLE', drain: false, fail: false, busy: false },
  ALLOCATED: { base: 'ALLOCATED', drain: false, fail: false, busy: true },
  MIXED: { base: 'MIXED', drain: false, fail: false, busy: true },
  COMPLETING: { base: 'COMPLETING', drain: false, fail: false, busy: true },
  DRAINING: { base: 'ALLOCATED', drain: true, fail: false, busy: true },
  DRAINED: { base: 'IDLE', drain: true, fail: false, busy: false },
  DOWN: { base: 'DOWN', drain: false, fail: false, busy: false },
  FAIL: { base: 'IDLE', drain: true, fail: true, busy: false },
};

/** Slurm as seen through slurmctld: node states, drains, jobs ending, reboots and slurmd registration. */
export class WorkloadManagerModel {
  private readonly nodes = new Map<string, NodeState>();
  private readonly startedAt: number;
  /** Mean idle gap between jobs (ms) that keeps a node busy `utilisation` of the time. */
  private readonly meanGapMs: number;

  constructor(
    siteNodes: readonly SiteNode[],
    private readonly timeline: Timeline,
    private readonly workload?: SiteWorkload,
    /** Told of drains and resumes, so that those of task-graph tasks reach the task log. */
    private readonly observer?: Pick<SiteTaskObserver, 'drained' | 'resumed'>,
    /** Where every drain, resume and fail is logged with the run its reason names. */
    private readonly changes?: NodeChangeLog,
  ) {
    const now = timeline.sync();
    this.startedAt = now;
    this.meanGapMs = workload ? ((cappedLognormalMean(workload.jobSeconds) * (1 - workload.utilisation)) / workload.utilisation) * 1000 : 0;
    for (const { name, wlm } of siteNodes) {
      const initial = FROM_SITE_STATE[wlm.state];
      // busySeconds on an IDLE node means a job is running: slurmctld would call it ALLOCATED.
      const busy = initial.busy || wlm.busySeconds > 0;
      const node: NodeState = {
        name,
        base: initial.busy || !busy ? initial.base : 'ALLOCATED',
        drain: initial.drain,
        fail: initial.fail,
        responding: wlm.responding,
        reason: wlm.reason,
        bootGeneration: 0,
        drainCount: 0,
        resumeCount: 0,
        failCount: 0,
        killedJobs: 0,
        arrivalGeneration: 0,
        outOfService: [],
        initialBusySeconds: busy ? (wlm.busySeconds > 0 ? wlm.busySeconds : null) : 0,
        ...(workload ? { random: randomStream(workload.seed, name) } : {}),
      };
      if (busy) this.startJob(node, wlm.busySeconds > 0 ? now + wlm.busySeconds * 1000 : Infinity);
      else this.scheduleArrival(node, now);
      this.nodes.set(name, node);
    }
  }

  /** Each node's first job and its out-of-service intervals (drained with no job, until back in service or failed). */
  serviceRecords(): Map<string, ServiceRecord> {
    this.timeline.sync();
    const seconds = (at: number) => (at - this.startedAt) / 1000;
    const records = new Map<string, ServiceRecord>();
    for (const node of this.nodes.values()) {
      const intervals: ServiceRecord['outOfService'] = node.outOfService.map(([a, b]) => [seconds(a), seconds(b)]);
      if (node.outSince !== undefined) intervals.push([seconds(node.outSince), null]);
      records.set(node.name, { initialBusySeconds: node.initialBusySeconds, outOfService: intervals });
    }
    return records;
  }

  get(name: string): WlmNodeSnapshot | undefined {
    this.timeline.sync();
    const node = this.nodes.get(name);
    return node && snapshot(node);
  }

  list(): WlmNodeSnapshot[] {
    this.timeline.sync();
    return Array.from(this.nodes.values(), snapshot);
  }

  /** The running jobs, one per busy node (job id = 1000 + the node's position), and when each ends (epoch ms; Infinity: never). */
  runningJobs(): { jobId: number; node: string; endsAt: number }[] {
    const now = this.timeline.sync();
    return [...this.nodes.values()].flatMap((node, i) => (node.jobEndsAt !== undefined && node.jobEndsAt > now ? [{ jobId: 1000 + i, node: node.name, endsAt: node.jobEndsAt }] : []));
  }

  /** `scontrol update State=DRAIN`: no new jobs; a busy node is DRAINING until its job ends. */
  drain(name: string, reason: string): void {
    const { node, now } = this.require(name);
    node.drain = true;
    node.reason = reason;
    node.drainCount++;
    this.refreshService(node, now);
    this.changes?.byReason(now, name, 'drain', reason);
    this.observer?.drained(name, reason, node.jobEndsAt);
  }

  /** `scontrol update State=RESUME`: clears DRAIN, FAIL and the reason; a DOWN node that responds comes back IDLE. `reason` only reaches the observer (Slurm clears it). */
  resume(name: string, reason?: string): void {
    const { node, now } = this.require(name);
    this.changes?.byReason(now, name, 'resume', reason, node.reason);
    node.drain = false;
    node.fail = false;
    node.reason = undefined;
    if (node.base === 'DOWN' && node.responding) node.base = 'IDLE';
    node.resumeCount++;
    this.refreshService(node, now);
    this.scheduleArrival(node, now);
    this.observer?.resumed(name, reason);
  }

  /** `scontrol update State=FAIL`: FAIL and DRAIN; a running job carries on (the node is FAILING). */
  fail(name: string, reason: string): void {
    const { node, now } = this.require(name);
    node.fail = true;
    node.drain = true;
    node.reason = reason;
    node.failCount++;
    this.changes?.byReason(now, name, 'fail', reason);
    this.refreshService(node, now);
  }

  /**
   * The node goes down for a reboot, killing any job. DRAIN/FAIL and the reason survive, as in Slurm.
   * Returns the boot generation to hand to `register`.
   */
  reboot(name: string): number {
    const { node, now } = this.require(name);
    if (node.jobEndsAt !== undefined) {
      node.killedJobs++;
      node.jobEndsAt = undefined;
    }
    node.base = 'DOWN';
    node.responding = false;
    this.refreshService(node, now);
    return ++node.bootGeneration;
  }

  /** slurmd registers after the boot of `generation`: IDLE and responding, boot time now. */
  register(name: string, generation: number, options: { clearDrain?: boolean } = {}): void {
    const { node, now } = this.require(name);
    if (node.bootGeneration !== generation) return;
    node.base = 'IDLE';
    node.responding = true;
    node.bootTime = now;
    node.rebootPending = undefined;
    if (options.clearDrain) {
      node.drain = false;
      node.fail = false;
      node.reason = undefined;
    }
    this.refreshService(node, now);
    this.scheduleArrival(node, now);
  }

  /** Marks a `scontrol reboot` as asked or under way (undefined: none pending). */
  setRebootPending(name: string, pending: 'REBOOT_REQUESTED' | 'REBOOT_ISSUED' | undefined): void {
    this.require(name).node.rebootPending = pending;
  }

  /** When the node's running job ends (Infinity: never); undefined when it runs none. */
  jobEndsAt(name: string): number | undefined {
    return this.require(name).node.jobEndsAt;
  }

  /** slurmctld gives up on a node that did not come back (ResumeTimeout): DOWN with a reason. */
  markDown(name: string, reason: string): void {
    const { node, now } = this.require(name);
    node.base = 'DOWN';
    node.reason = reason;
    node.rebootPending = undefined;
    this.refreshService(node, now);
  }

  /** The node and the simulated now, after the due events ran (one sync, so no event runs mid-change). */
  private require(name: string): { node: NodeState; now: number } {
    const now = this.timeline.sync();
    const node = this.nodes.get(name);
    if (!node) throw new SimRequestError(404, `Invalid node name specified: ${name}`);
    return { node, now };
  }

  private startJob(node: NodeState, endsAt: number): void {
    node.jobEndsAt = endsAt;
    if (endsAt === Infinity) return;
    this.timeline.at(endsAt, (at) => {
      // A reboot may have killed this job already.
      if (node.jobEndsAt !== at) return;
      node.jobEndsAt = undefined;
      if (BUSY_BASES.includes(node.base)) node.base = 'IDLE';
      this.refreshService(node, at);
      this.scheduleArrival(node, at);
    });
  }

  /** With a workload, the next job arrives on a node in service after an exponential idle gap. */
  private scheduleArrival(node: NodeState, from: number): void {
    const workload = this.workload;
    const random = node.random;
    if (!workload || !random || !inService(node) || node.jobEndsAt !== undefined) return;
    const generation = ++node.arrivalGeneration;
    this.timeline.at(from + Math.round(exponential(random, this.meanGapMs)), (at) => {
      if (node.arrivalGeneration !== generation || !inService(node) || node.jobEndsAt !== undefined) return;
      node.base = 'ALLOCATED';
      this.startJob(node, at + Math.round(lognormal(random, workload.jobSeconds) * 1000));
    });
  }

  /**
   * Out of service: drained (by a drain request since the start) and running no job, until back in
   * service (resumed, responding, up) or failed. Opens at the drain of an idle node or at the end
   * of the job of a drained one.
   */
  private refreshService(node: NodeState, now: number): void {
    const out = node.drainCount > 0 && !node.fail && !inService(node) && node.jobEndsAt === undefined;
    if (out && node.outSince === undefined) node.outSince = now;
    if (!out && node.outSince !== undefined) {
      node.outOfService.push([node.outSince, now]);
      node.outSince = undefined;
    }
  }
}

/** Can take jobs: not drained or failed, responding and up. */
function inService(node: NodeState): boolean {
  return !node.drain && !node.fail && node.responding && node.base !== 'DOWN';
}

function snapshot(node: NodeState): WlmNodeSnapshot {
  const flags: string[] = [];
  if (node.drain) flags.push('DRAIN');
  if (node.fail) flags.push('FAIL');
  if (!node.responding) flags.push('NOT_RESPONDING');
  if (node.rebootPending) flags.push(node.rebootPending);
  return {
    name: node.name,
    base: node.base,
    flags,
    display: displayState(node) + (node.responding ? '' : '*'),
    reason: node.reason,
    bootTime: node.bootTime,
    drainCount: node.drainCount,
    resumeCount: node.resumeCount,
    failCount: node.failCount,
    killedJobs: node.killedJobs,
  };
}

/** Slurm's node_state_string precedence: FAIL over DRAIN over the base state. */
function displayState(node: NodeState): WlmDisplayState {
  const busy = BUSY_BASES.includes(node.base);
  if (node.fail) return busy ? 'FAILING' : 'FAIL';
  if (node.drain) return busy ? 'DRAINING' : 'DRAINED';
  return node.base;
}
