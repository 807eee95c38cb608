import type { SiteNode, SiteWlmState } from '../site-file';
import { SimRequestError } from '../errors';
import type { Timeline } from '../timeline';

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
  drainCount: number;
  resumeCount: number;
  failCount: number;
  killedJobs: number;
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

  constructor(
    siteNodes: readonly SiteNode[],
    private readonly timeline: Timeline,
  ) {
    const now = timeline.sync();
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
      };
      if (busy) this.startJob(node, wlm.busySeconds > 0 ? now + wlm.busySeconds * 1000 : Infinity);
      this.nodes.set(name, node);
    }
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

  /** `scontrol update State=DRAIN`: no new jobs; a busy node is DRAINING until its job ends. */
  drain(name: string, reason: string): void {
    const node = this.require(name);
    node.drain = true;
    node.reason = reason;
    node.drainCount++;
  }

  /** `scontrol update State=RESUME`: clears DRAIN, FAIL and the reason; a DOWN node that responds comes back IDLE. */
  resume(name: string): void {
    const node = this.require(name);
    node.drain = false;
    node.fail = false;
    node.reason = undefined;
    if (node.base === 'DOWN' && node.responding) node.base = 'IDLE';
    node.resumeCount++;
  }

  /** `scontrol update State=FAIL`: FAIL and DRAIN; a running job carries on (the node is FAILING). */
  fail(name: string, reason: string): void {
    const node = this.require(name);
    node.fail = true;
    node.drain = true;
    node.reason = reason;
    node.failCount++;
  }

  /**
   * The node goes down for a reboot, killing any job. DRAIN/FAIL and the reason survive, as in Slurm.
   * Returns the boot generation to hand to `register`.
   */
  reboot(name: string): number {
    const node = this.require(name);
    if (node.jobEndsAt !== undefined) {
      node.killedJobs++;
      node.jobEndsAt = undefined;
    }
    node.base = 'DOWN';
    node.responding = false;
    return ++node.bootGeneration;
  }

  /** slurmd registers after the boot of `generation`: IDLE and responding, boot time now. */
  register(name: string, generation: number): void {
    const now = this.timeline.sync();
    const node = this.require(name);
    if (node.bootGeneration !== generation) return;
    node.base = 'IDLE';
    node.responding = true;
    node.bootTime = now;
  }

  private require(name: string): NodeState {
    this.timeline.sync();
    const node = this.nodes.get(name);
    if (!node) throw new SimRequestError(404, `Invalid node name specified: ${name}`);
    return node;
  }

  private startJob(node: NodeState, endsAt: number): void {
    node.jobEndsAt = endsAt;
    if (endsAt === Infinity) return;
    this.timeline.at(endsAt, (at) => {
      // A reboot may have killed this job already.
      if (node.jobEndsAt !== at) return;
      node.jobEndsAt = undefined;
      if (BUSY_BASES.includes(node.base)) node.base = 'IDLE';
    });
  }
}

function snapshot(node: NodeState): WlmNodeSnapshot {
  const flags: string[] = [];
  if (node.drain) flags.push('DRAIN');
  if (node.fail) flags.push('FAIL');
  if (!node.responding) flags.push('NOT_RESPONDING');
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
