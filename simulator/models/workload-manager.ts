import type { SiteNode, SiteSlurm, SiteWlmState, SiteWorkload } from '../site-file';
import { SimRequestError } from '../errors';
import type { Timeline } from '../timeline';
import { cappedLognormalMean, exponential, lognormal, randomStream, type Random } from '../seeded-random';
import { SlurmVersion } from './slurm-version';
import type { SiteTaskObserver } from './task-runner';
import type { NodeChangeLog } from './node-changes';
import { TriggerManagerModel } from './trigger-manager';

/** power_save.c's default power_save_interval: how often 26.05 looks at the reboots asked. */
const POWER_SAVE_INTERVAL_MS = 10_000;

/** A node's base state in slurmctld (NODE_STATE_BASE); COMPLETING, DRAIN, FAIL, ... are flags. */
export type WlmBase = 'IDLE' | 'ALLOCATED' | 'MIXED' | 'DOWN';

export interface WlmNodeSnapshot {
  name: string;
  base: WlmBase;
  /** Slurm's flags, in the order data_parser prints them: DRAIN, COMPLETING, NOT_RESPONDING, FAIL, REBOOT_REQUESTED, REBOOT_ISSUED. */
  flags: string[];
  /** What `sinfo`/`scontrol` print (node_state_string): `DRAINED`, `DRAINING@`, `REBOOT^`, `DOWN*`, `FAIL`, ... */
  display: string;
  reason?: string;
  /** When slurmd last registered after a boot, epoch ms; undefined if never. */
  bootTime?: number;
  /** `scontrol reboot nextstate=`, until the reboot completes. */
  nextState?: 'RESUME' | 'DOWN';
  drainCount: number;
  resumeCount: number;
  failCount: number;
  /** Jobs killed by a reboot: the proof that a workflow rebooted a busy node. */
  killedJobs: number;
}

/** How the simulated slurmctld is configured (the site file's `slurm` section) and how long an Epilog runs. */
export interface WlmSettings extends SiteSlurm {
  epilogSeconds: number;
}

export const DEFAULT_WLM_SETTINGS: WlmSettings = {
  version: '24.11.5',
  returnToService: 2,
  slurmdTimeoutSeconds: 600,
  resumeTimeoutSeconds: 600,
  accountingStorage: 'slurmdbd',
  epilogSeconds: 0,
};

interface NodeState {
  name: string;
  base: WlmBase;
  drain: boolean;
  fail: boolean;
  /** slurmctld hears from slurmd: NOT_RESPONDING when false. */
  responding: boolean;
  /** slurmd runs on the node (it stops while the node reboots). */
  slurmdUp: boolean;
  /** The Epilog runs after the last job: COMPLETING until then (epoch ms). */
  completingUntil?: number;
  reason?: string;
  bootTime?: number;
  /**
   * The running job: its id, its end (Infinity: no end) and its time limit's end, which is what
   * Slurm reports as its end (`end_time`, squeue `%L`); undefined when the node runs none.
   */
  job?: { id: number; endsAt: number; limitEndsAt: number };
  /** Bumped by every reboot, so the registration of a superseded boot is ignored. */
  bootGeneration: number;
  rebootRequested: boolean;
  rebootIssued: boolean;
  /** `scontrol reboot` nextstate (NO_VAL: undefined) and the UNDRAIN flag ASAP adds when it set the drain itself. */
  nextState?: 'RESUME' | 'DOWN';
  undrainAfterReboot: boolean;
  /** boot_req_time: when the reboot was issued (ResumeTimeout counts from it). */
  rebootIssuedAt?: number;
  /** From 26.05: the power-save pass at which the reboot asked will be looked at (slurm-version.ts rebootsOnPowerSavePass). */
  rebootPassAt?: number;
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

/** The site file's sinfo-style states as slurmctld holds them: a base state, flags, and whether a job runs (or, COMPLETING, its Epilog). */
const FROM_SITE_STATE: Record<SiteWlmState, { base: WlmBase; drain: boolean; fail: boolean; busy: boolean }> = {
  IDLE: { base: 'IDLE', drain: false, fail: false, busy: false },
  ALLOCATED: { base: 'ALLOCATED', drain: false, fail: false, busy: true },
  MIXED: { base: 'MIXED', drain: false, fail: false, busy: true },
  COMPLETING: { base: 'IDLE', drain: false, fail: false, busy: true },
  DRAINING: { base: 'ALLOCATED', drain: true, fail: false, busy: true },
  DRAINED: { base: 'IDLE', drain: true, fail: false, busy: false },
  DOWN: { base: 'DOWN', drain: false, fail: false, busy: false },
  FAIL: { base: 'IDLE', drain: false, fail: true, busy: false },
};

/** An advanced reservation as slurmctld holds it (times in epoch ms). */
export interface WlmReservation {
  name: string;
  nodes: string[];
  startsAt: number;
  endsAt: number;
  /** e.g. MAINT, IGNORE_JOBS. */
  flags: string[];
  users: string[];
}

/** A `scontrol reboot`: ASAP drains at once; nextstate and reason as given. */
export interface RebootRequest {
  asap: boolean;
  nextState?: 'RESUME' | 'DOWN';
  reason?: string;
}

/**
 * Slurm as slurmctld holds it: node states and reasons, drains, jobs and their Epilog, `scontrol
 * reboot`, slurmd going away (a reboot through the boot service) and registering again. The rules
 * follow SchedMD/slurm's src/slurmctld/node_mgr.c (update_node, validate_node_specs,
 * set_node_down_ptr), proc_req.c (_slurm_rpc_reboot_nodes), controller.c (the reboot of an idle node),
 * ping_nodes.c (SlurmdTimeout), at tags slurm-22-05-8-1 and slurm-24-11-7-1; what changed between
 * them is decided by the site's `slurm.version` (slurm-version.ts). simulator/README.md lists what is
 * left out.
 */
export class WorkloadManagerModel {
  private readonly nodes = new Map<string, NodeState>();
  /** Advanced reservations by name (`scontrol create reservation`). */
  private readonly reservations = new Map<string, WlmReservation>();
  private readonly startedAt: number;
  /** Mean idle gap between jobs (ms) that keeps a node busy `utilisation` of the time. */
  private readonly meanGapMs: number;
  private readonly settings: WlmSettings;
  readonly version: SlurmVersion;
  private nextJobId = 1;
  /** `strigger`: the node events it fires on are reported where node_mgr.c calls trigger_node_up/down/drained. */
  readonly triggers: TriggerManagerModel;
  /** RebootProgram: what slurmd runs when slurmctld issues a node's reboot (the head node reboots it). */
  private rebootProgram: (name: string) => void = () => {};

  constructor(
    siteNodes: readonly SiteNode[],
    private readonly timeline: Timeline,
    private readonly workload?: SiteWorkload,
    /** Told of drains and resumes, so that those of task-graph tasks reach the task log. */
    private readonly observer?: Pick<SiteTaskObserver, 'drained' | 'resumed'>,
    settings: Partial<WlmSettings> = {},
    /** Where every drain, resume and fail is logged with the run its reason names. */
    private readonly changes?: NodeChangeLog,
  ) {
    // A definition built in code rather than parsed may leave settings out: the defaults stand for them.
    const given = Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
    this.settings = { ...DEFAULT_WLM_SETTINGS, ...given };
    this.version = new SlurmVersion(this.settings.version);
    const now = timeline.sync();
    this.startedAt = now;
    this.triggers = new TriggerManagerModel(timeline, () => [...this.nodes.keys()], now);
    // Jobs run a fraction of their time limit: the mean length is the mean limit times the mean fraction.
    const fraction = workload?.endFraction ?? { min: 1, max: 1 };
    const meanJobSeconds = workload ? cappedLognormalMean(workload.jobSeconds) * ((fraction.min + fraction.max) / 2) : 0;
    this.meanGapMs = workload ? ((meanJobSeconds * (1 - workload.utilisation)) / workload.utilisation) * 1000 : 0;
    for (const { name, wlm } of siteNodes) {
      const initial = FROM_SITE_STATE[wlm.state];
      // busySeconds on an IDLE node means a job is running: slurmctld would call it ALLOCATED.
      const busy = initial.busy || wlm.busySeconds > 0;
      const completing = wlm.state === 'COMPLETING';
      const node: NodeState = {
        name,
        base: initial.busy || !busy ? initial.base : 'ALLOCATED',
        drain: initial.drain,
        fail: initial.fail,
        responding: wlm.responding,
        slurmdUp: wlm.responding,
        reason: wlm.reason,
        bootGeneration: 0,
        rebootRequested: false,
        rebootIssued: false,
        undrainAfterReboot: false,
        drainCount: 0,
        resumeCount: 0,
        failCount: 0,
        killedJobs: 0,
        arrivalGeneration: 0,
        outOfService: [],
        initialBusySeconds: busy ? (wlm.busySeconds > 0 ? wlm.busySeconds : null) : 0,
        ...(workload ? { random: randomStream(workload.seed, name) } : {}),
      };
      const endsAt = wlm.busySeconds > 0 ? now + wlm.busySeconds * 1000 : Infinity;
      if (completing) this.startEpilog(node, endsAt);
      else if (busy) this.startJob(node, endsAt, wlm.timeLimitSeconds !== undefined && Number.isFinite(endsAt) ? now + wlm.timeLimitSeconds * 1000 : endsAt);
      else this.scheduleArrival(node, now);
      if (!node.responding) this.scheduleNotResponding(node, now);
      this.nodes.set(name, node);
    }
  }

  /** `scontrol show reservation`: every reservation not yet over, in name order. */
  listReservations(): WlmReservation[] {
    const now = this.timeline.sync();
    for (const [name, r] of this.reservations) if (r.endsAt <= now) this.reservations.delete(name);
    return [...this.reservations.values()].sort((a, b) => a.name.localeCompare(b.name)).map((r) => ({ ...r, nodes: [...r.nodes], flags: [...r.flags] }));
  }

  /**
   * `scontrol create reservation` (an existing name is refused, as Slurm does) or, with `update`,
   * `scontrol update reservationname=`: the given fields change. Nodes must exist.
   */
  putReservation(reservation: WlmReservation, mode: 'create' | 'update'): void {
    const now = this.timeline.sync();
    const existing = this.reservations.get(reservation.name);
    if (mode === 'create' && existing) throw new SimRequestError(409, `Error creating the reservation: Duplicate reservation name`);
    if (mode === 'update' && !existing) throw new SimRequestError(404, `Error updating the reservation: Invalid reservation name specified`);
    // update_resv (reservation.c): the start of a reservation that has begun cannot move.
    if (mode === 'update' && existing && existing.startsAt <= now && reservation.startsAt !== existing.startsAt)
      throw new SimRequestError(400, 'Error updating the reservation: Reservation already started');
    for (const node of reservation.nodes)
      if (!this.nodes.has(node)) throw new SimRequestError(400, `Error creating the reservation: Invalid node name specified: ${node}`);
    if (!(reservation.endsAt > reservation.startsAt))
      throw new SimRequestError(400, 'Error creating the reservation: Invalid time specification (end before start)');
    this.reservations.set(reservation.name, { ...reservation, nodes: [...reservation.nodes], flags: [...reservation.flags] });
  }

  /** `scontrol delete reservationname=`. */
  deleteReservation(name: string): void {
    this.timeline.sync();
    if (!this.reservations.delete(name)) throw new SimRequestError(404, `Error deleting the reservation: Invalid reservation name specified`);
  }

  /**
   * Slurm's rule for a job that asks for no reservation (src/slurmctld/reservation.c,
   * _foreach_job_test_no_resv): a reservation on the node keeps the job off it unless the job's
   * time limit ends by the reservation's start, or the reservation ends before the job starts.
   */
  private reservationRefuses(node: string, jobStart: number, jobLimitEnd: number): boolean {
    for (const r of this.reservations.values()) {
      if (!r.nodes.includes(node)) continue;
      if (r.startsAt >= jobLimitEnd || r.endsAt <= jobStart) continue;
      return true;
    }
    return false;
  }

  /** Installs the RebootProgram: called with the node's name once slurmctld issues its reboot. */
  setRebootProgram(program: (name: string) => void): void {
    this.rebootProgram = program;
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

  /**
   * The running jobs and when each ends as Slurm reports it: the end of its time limit (epoch ms;
   * Infinity: none), which the job may end well before (slurmctld sets end_time = start + time limit).
   */
  runningJobs(): { jobId: number; node: string; endsAt: number }[] {
    const now = this.timeline.sync();
    return [...this.nodes.values()].flatMap((node) =>
      node.job && node.job.endsAt > now ? [{ jobId: node.job.id, node: node.name, endsAt: node.job.limitEndsAt }] : [],
    );
  }

  /**
   * `sbatch -w <node> --wrap 'sleep <seconds>'` on a node that can take it now (in service, no job,
   * no Epilog): it runs at once. Anything else is refused: the simulator has no job queue.
   */
  submitJob(name: string, seconds: number): number {
    const { node, now } = this.require(name);
    if (!inService(node) || node.job || node.completingUntil !== undefined) {
      throw new SimRequestError(
        409,
        `node ${name} cannot start a job now (${displayState(node)}): the simulator runs a job only on a node that can take it at once`,
      );
    }
    node.base = 'ALLOCATED';
    this.startJob(node, Number.isFinite(seconds) ? now + seconds * 1000 : Infinity);
    return node.job!.id;
  }

  /** `scancel <job>`: the job ends now (its Epilog follows). */
  cancelJob(jobId: number): void {
    const now = this.timeline.sync();
    const node = [...this.nodes.values()].find((n) => n.job?.id === jobId);
    if (!node) throw new SimRequestError(404, `Invalid job id specified: ${jobId}`);
    this.endJob(node, now);
  }

  /**
   * `scontrol update State=DRAIN Reason=...`: no new jobs; a busy node is DRAINING until its job
   * ends. The reason replaces the node's; FAIL is cleared (node_mgr.c update_node: `&= ~DRAIN; &= ~FAIL; |= state`).
   */
  drain(name: string, reason: string): void {
    const { node, now } = this.require(name);
    if (reason) node.reason = reason;
    node.drain = true;
    node.fail = false;
    node.drainCount++;
    // update_node: a node with no job (and no Epilog) is drained at once.
    if (node.job === undefined && node.completingUntil === undefined) this.triggers.nodeEvent('drained', name);
    this.refreshService(node, now);
    this.changes?.byReason(now, name, 'drain', reason);
    this.observer?.drained(name, reason, node.job?.endsAt);
  }

  /**
   * `scontrol update State=RESUME` (node_mgr.c update_node): valid on a node DOWN, drained, failed or
   * with a reboot asked (else `Invalid node state specified`); clears DRAIN, FAIL and any pending
   * reboot. An idle drained or failed node, or a DOWN one, comes up: its reason goes with it where the
   * release clears it (slurm-version.ts); 22.05 cleared a busy node's too (seen on 22.05.8).
   * `reason` only reaches the observer.
   */
  resume(name: string, reason?: string): void {
    const { node, now } = this.require(name);
    if (!(node.base === 'DOWN' || node.drain || node.fail || node.rebootRequested)) throw new SimRequestError(400, 'Invalid node state specified');
    this.changes?.byReason(now, name, 'resume', reason, node.reason);
    const comesUp = node.base === 'DOWN' || (node.base === 'IDLE' && (node.drain || node.fail));
    if (this.version.clearsReasonWhenUp(this.settings.accountingStorage) && (comesUp || this.version.resumeClearsBusyReason)) node.reason = undefined;
    node.drain = false;
    node.fail = false;
    node.rebootRequested = false;
    node.rebootIssued = false;
    node.nextState = undefined;
    node.undrainAfterReboot = false;
    if (node.base === 'DOWN') {
      node.base = 'IDLE';
      // update_node: a DOWN node set IDLE is up (trigger_node_up).
      this.triggers.nodeEvent('up', name);
      // _require_node_reg(): slurmd must answer again; a node whose slurmd is gone goes DOWN again after SlurmdTimeout.
      if (!node.slurmdUp) {
        node.responding = false;
        this.scheduleNotResponding(node, now);
      }
    }
    node.resumeCount++;
    this.refreshService(node, now);
    this.scheduleArrival(node, now);
    this.observer?.resumed(name, reason);
  }

  /**
   * `scontrol update Reason=...` with no state (slurmrestd: an update with the reason alone): the
   * reason replaces the node's, whatever its state, and only when not empty (src/slurmctld/node_mgr.c
   * update_node: `if (reason && reason[0])`, 22.05 to 26.05): an empty reason changes nothing.
   */
  setReason(name: string, reason: string): void {
    const { node, now } = this.require(name);
    if (!reason) return;
    this.changes?.byReason(now, name, 'reason', reason, node.reason);
    node.reason = reason;
  }

  /**
   * `scontrol update State=DOWN Reason=...` (node_mgr.c update_node): the reason replaces the node's,
   * _make_node_down sets it DOWN (its flags kept) and its job is killed.
   */
  down(name: string, reason: string): void {
    const { node, now } = this.require(name);
    if (reason) node.reason = reason;
    this.makeDown(node, now);
  }

  /** `scontrol update State=FAIL Reason=...`: FAIL (and no DRAIN: update_node clears it); a running job carries on (FAILING). */
  fail(name: string, reason: string): void {
    const { node, now } = this.require(name);
    if (reason) node.reason = reason;
    node.fail = true;
    node.drain = false;
    node.failCount++;
    this.changes?.byReason(now, name, 'fail', reason);
    this.refreshService(node, now);
  }

  /**
   * `scontrol reboot [ASAP] [nextstate=] [reason=] <node>` (proc_req.c _slurm_rpc_reboot_nodes): a node
   * with a reboot pending is skipped. The reason replaces the node's; ASAP drains now (reason `Reboot
   * ASAP` when it has none) and, when it set the drain itself, lifts it again at registration. The
   * reboot is issued once the node is idle (controller.c): DOWN+REBOOT_ISSUED, ` : reboot issued`.
   */
  requestReboot(name: string, request: RebootRequest): void {
    const { node, now } = this.require(name);
    if (node.rebootRequested || node.rebootIssued) return;
    node.rebootRequested = true;
    node.nextState = request.nextState;
    if (request.reason) node.reason = request.reason;
    if (request.asap) {
      if (this.version.asapDefaultsToResume) node.nextState ??= 'RESUME';
      node.undrainAfterReboot = !node.drain;
      node.drain = true;
      node.reason ??= 'Reboot ASAP';
    }
    node.reason ??= 'reboot requested';
    this.refreshService(node, now);
    this.issueRebootIfIdle(node, now);
  }

  /**
   * The node goes down for a reboot outside Slurm (the boot service), killing any job: slurmd stops.
   * slurmctld finds it not responding, and SlurmdTimeout later sets it DOWN (ping_nodes.c). A reboot
   * Slurm issued itself (REBOOT_ISSUED) is not pinged meanwhile. Returns the boot generation to hand to `register`.
   */
  reboot(name: string): number {
    const { node, now } = this.require(name);
    if (node.job) {
      node.killedJobs++;
      node.job = undefined;
    }
    node.completingUntil = undefined;
    // The job is gone with the node; slurmctld learns of it by the time the node is DOWN or registers.
    if (node.base === 'ALLOCATED' || node.base === 'MIXED') node.base = 'IDLE';
    node.slurmdUp = false;
    const generation = ++node.bootGeneration;
    if (!node.rebootIssued) {
      node.responding = false;
      this.scheduleNotResponding(node, now);
    }
    this.refreshService(node, now);
    return generation;
  }

  /**
   * slurmd registers after the boot of `generation` (node_mgr.c validate_node_specs): a DOWN node
   * comes back when ReturnToService=2, when its reboot was issued by Slurm, or with ReturnToService=1
   * when it was only `Not responding` and did not reboot (never after a reboot, as here). A reboot's
   * nextstate lifts the drain (any drain: ours and an admin's); nextstate=DOWN leaves it DOWN with
   * ` : reboot complete`. A node not DOWN that rebooted unasked while not drained is set DOWN
   * `Node unexpectedly rebooted`, unless ReturnToService=2.
   */
  register(name: string, generation: number): void {
    const { node, now } = this.require(name);
    if (node.bootGeneration !== generation) return;
    node.slurmdUp = true;
    node.responding = true;
    node.bootTime = now;
    const rts = this.settings.returnToService;
    if (node.base === 'DOWN') {
      if (rts === 2 || node.rebootIssued) {
        const nextState = node.nextState;
        if (nextState !== undefined || node.undrainAfterReboot) node.drain = false;
        node.rebootIssued = false;
        node.rebootIssuedAt = undefined;
        node.nextState = undefined;
        node.undrainAfterReboot = false;
        // validate_node_specs: `returned to service` (trigger_node_up), nextstate=DOWN too.
        this.triggers.nodeEvent('up', name);
        if (nextState === 'DOWN') this.appendReason(node, 'reboot complete');
        else {
          node.base = 'IDLE';
          if (!node.drain && !node.fail) this.nodeUp(node);
        }
      }
    } else if (rts !== 2 && !(node.drain && node.job === undefined && node.completingUntil === undefined)) {
      if (node.reason === undefined || node.reason === 'Not responding' || node.rebootRequested) node.reason = 'Node unexpectedly rebooted';
      if (node.rebootRequested) {
        node.rebootRequested = false;
        if (node.undrainAfterReboot) node.drain = false;
      }
      this.makeDown(node, now);
    }
    this.refreshService(node, now);
    this.issueRebootIfIdle(node, now);
    this.scheduleArrival(node, now);
  }

  /** When the node's running job ends (Infinity: never); undefined when it runs none. */
  jobEndsAt(name: string): number | undefined {
    return this.require(name).node.job?.endsAt;
  }

  /** The node and the simulated now, after the due events ran (one sync, so no event runs mid-change). */
  private require(name: string): { node: NodeState; now: number } {
    const now = this.timeline.sync();
    const node = this.nodes.get(name);
    if (!node) throw new SimRequestError(404, `Invalid node name specified: ${name}`);
    return { node, now };
  }

  /** slurmctld appends to a reason (set_node_reason from 23.02; 22.05's set_node_reboot_reason for reboots). */
  private appendReason(node: NodeState, message: string): void {
    if (!node.reason) node.reason = message;
    else if (!node.reason.includes(this.version.reasonsAppend ? ` : ${message}` : message)) node.reason = `${node.reason} : ${message}`;
    else if (!this.version.reasonsAppend) node.reason = message;
  }

  /**
   * set_node_down_ptr: DOWN, its jobs killed. From 23.02 the reason gets ` : <why>` appended; 22.05
   * set it only when the node had none (or one starting `Not responding`).
   */
  private setDown(node: NodeState, why: string, now: number): void {
    if (this.version.reasonsAppend) this.appendReason(node, why);
    else if (node.reason === undefined || node.reason.startsWith('Not responding')) node.reason = why;
    this.makeDown(node, now);
  }

  private makeDown(node: NodeState, now: number): void {
    node.base = 'DOWN';
    // _make_node_down: trigger_node_down.
    this.triggers.nodeEvent('down', node.name);
    if (node.job) {
      node.killedJobs++;
      node.job = undefined;
    }
    node.completingUntil = undefined;
    this.refreshService(node, now);
  }

  /** clusteracct_storage_g_node_up(): the reason goes, where the release and accounting clear it. */
  private nodeUp(node: NodeState): void {
    if (this.version.clearsReasonWhenUp(this.settings.accountingStorage)) node.reason = undefined;
  }

  /** ping_nodes.c: a node whose slurmd has not answered for SlurmdTimeout is set DOWN `Not responding`. */
  private scheduleNotResponding(node: NodeState, from: number): void {
    const generation = node.bootGeneration;
    this.timeline.at(from + this.settings.slurmdTimeoutSeconds * 1000, (at) => {
      if (node.bootGeneration !== generation || node.responding || node.rebootIssued || node.base === 'DOWN') return;
      this.setDown(node, 'Not responding', at);
    });
  }

  /**
   * controller.c: a node with a reboot asked is rebooted once idle (no job, no Epilog, responding) or DOWN, at
   * once (the next background pass). From 26.05 power_save.c issues it, at its next pass (every
   * power_save_interval, 10 s): passes are taken at each whole 10 s of the clock.
   */
  private issueRebootIfIdle(node: NodeState, now: number, onPass = false): void {
    if (!node.rebootRequested) return;
    const idle = node.base === 'IDLE' && node.job === undefined && node.completingUntil === undefined && node.responding;
    if (!idle && node.base !== 'DOWN') return;
    if (this.version.rebootsOnPowerSavePass && !onPass) {
      const pass = (Math.floor(now / POWER_SAVE_INTERVAL_MS) + 1) * POWER_SAVE_INTERVAL_MS;
      if (node.rebootPassAt === pass) return;
      node.rebootPassAt = pass;
      this.timeline.at(pass, (at) => {
        if (node.rebootPassAt !== pass) return;
        node.rebootPassAt = undefined;
        this.issueRebootIfIdle(node, at, true);
      });
      return;
    }
    node.rebootPassAt = undefined;
    node.base = 'DOWN';
    node.rebootRequested = false;
    node.rebootIssued = true;
    node.rebootIssuedAt = now;
    this.appendReason(node, 'reboot issued');
    this.refreshService(node, now);
    const issuedAt = now;
    // check_reboot_nodes(): not back within ResumeTimeout: DOWN ` : reboot timed out`.
    this.timeline.at(now + this.settings.resumeTimeoutSeconds * 1000, (at) => {
      if (!node.rebootIssued || node.rebootIssuedAt !== issuedAt) return;
      node.rebootIssued = false;
      node.rebootIssuedAt = undefined;
      // Appended on every release (22.05: set_node_reboot_reason; later: set_node_down_ptr).
      this.appendReason(node, 'reboot timed out');
      if (this.version.rebootTimeoutClearsDrain) node.drain = false;
      this.makeDown(node, at);
      // A node whose slurmd still answers is returned by node_did_resp() with ReturnToService=2.
      if (node.slurmdUp) {
        node.responding = true;
        if (this.settings.returnToService === 2) {
          node.base = 'IDLE';
          // node_did_resp: `returned to service` (trigger_node_up).
          this.triggers.nodeEvent('up', node.name);
          if (node.nextState !== undefined || node.undrainAfterReboot) node.drain = false;
          if (!node.drain && !node.fail) this.nodeUp(node);
        }
      } else node.responding = false;
      this.refreshService(node, at);
    });
    this.rebootProgram(node.name);
  }

  private startJob(node: NodeState, endsAt: number, limitEndsAt = endsAt): void {
    const job = { id: this.nextJobId++, endsAt, limitEndsAt: Math.max(endsAt, limitEndsAt) };
    node.job = job;
    if (endsAt === Infinity) return;
    this.timeline.at(endsAt, (at) => {
      // A reboot or scancel may have ended this job already.
      if (node.job !== job) return;
      this.endJob(node, at);
    });
  }

  /** The job is over: the Epilog runs (COMPLETING) for epilogSeconds, then the node takes work (or its reboot) again. */
  private endJob(node: NodeState, at: number): void {
    node.job = undefined;
    if (node.base === 'ALLOCATED' || node.base === 'MIXED') node.base = 'IDLE';
    if (this.settings.epilogSeconds > 0) this.startEpilog(node, at + this.settings.epilogSeconds * 1000);
    else this.afterIdle(node, at);
  }

  private startEpilog(node: NodeState, until: number): void {
    node.completingUntil = until;
    if (until === Infinity) return;
    this.timeline.at(until, (at) => {
      if (node.completingUntil !== until) return;
      node.completingUntil = undefined;
      this.afterIdle(node, at);
    });
  }

  private afterIdle(node: NodeState, at: number): void {
    // make_node_idle: a drained (or failed) node's last job and Epilog are over (trigger_node_drained).
    if (node.drain || node.fail) this.triggers.nodeEvent('drained', node.name);
    this.refreshService(node, at);
    this.issueRebootIfIdle(node, at);
    this.scheduleArrival(node, at);
  }

  /** With a workload, the next job arrives on a node in service after an exponential idle gap. */
  private scheduleArrival(node: NodeState, from: number): void {
    const workload = this.workload;
    const random = node.random;
    if (!workload || !random || !canTakeJob(node)) return;
    const generation = ++node.arrivalGeneration;
    this.timeline.at(from + Math.round(exponential(random, this.meanGapMs)), (at) => {
      if (node.arrivalGeneration !== generation || !canTakeJob(node)) return;
      const limitMs = Math.round(lognormal(random, workload.jobSeconds) * 1000);
      const { min, max } = workload.endFraction;
      // The draw only when jobs end before their limit, so a site without endFraction replays as before.
      const lengthMs = min === 1 && max === 1 ? limitMs : Math.round(limitMs * (min + (max - min) * random()));
      if (this.reservationRefuses(node.name, at, at + limitMs)) {
        // Slurm holds this job back from the node (it runs elsewhere): the node waits for the next one.
        this.scheduleArrival(node, at);
        return;
      }
      node.base = 'ALLOCATED';
      this.startJob(node, at + lengthMs, at + limitMs);
    });
  }

  /**
   * Out of service: drained (by a drain request since the start) and running no job, until back in
   * service (resumed, responding, up) or failed. Opens at the drain of an idle node or at the end
   * of the job of a drained one.
   */
  private refreshService(node: NodeState, now: number): void {
    const out = node.drainCount > 0 && !node.fail && !inService(node) && node.job === undefined && node.completingUntil === undefined;
    if (out && node.outSince === undefined) node.outSince = now;
    if (!out && node.outSince !== undefined) {
      node.outOfService.push([node.outSince, now]);
      node.outSince = undefined;
    }
  }
}

/**
 * Can take jobs: not drained or failed, responding and up, and no reboot that returns it with
 * nextstate=RESUME pending (src/slurmctld/node_scheduler.c leaves out rs_node_bitmap; a plain
 * `scontrol reboot` still lets jobs in until the node is idle).
 */
function inService(node: NodeState): boolean {
  return !node.drain && !node.fail && !(node.rebootRequested && node.nextState === 'RESUME') && !node.rebootIssued && node.responding && node.base !== 'DOWN';
}

function canTakeJob(node: NodeState): boolean {
  return inService(node) && node.job === undefined && node.completingUntil === undefined;
}

function snapshot(node: NodeState): WlmNodeSnapshot {
  const flags: string[] = [];
  if (node.drain) flags.push('DRAIN');
  if (node.completingUntil !== undefined) flags.push('COMPLETING');
  if (!node.responding) flags.push('NOT_RESPONDING');
  if (node.fail) flags.push('FAIL');
  if (node.rebootRequested) flags.push('REBOOT_REQUESTED');
  if (node.rebootIssued) flags.push('REBOOT_ISSUED');
  return {
    name: node.name,
    base: node.base,
    flags,
    display: displayState(node),
    reason: node.reason,
    bootTime: node.bootTime,
    ...(node.nextState ? { nextState: node.nextState } : {}),
    drainCount: node.drainCount,
    resumeCount: node.resumeCount,
    failCount: node.failCount,
    killedJobs: node.killedJobs,
  };
}

/** src/common/slurm_protocol_defs.c node_state_string(): reboot over drain over fail over the base, with its suffix (^ issued, @ asked, * not responding). */
function displayState(node: NodeState): string {
  const busy = node.base === 'ALLOCATED' || node.base === 'MIXED';
  const completing = node.completingUntil !== undefined;
  const suffix = node.rebootIssued ? '^' : node.rebootRequested ? '@' : node.responding ? '' : '*';
  if ((node.rebootRequested || node.rebootIssued) && !busy) return node.rebootIssued ? 'REBOOT^' : node.responding ? 'REBOOT' : 'REBOOT*';
  if (node.drain) return `${completing || busy ? 'DRAINING' : 'DRAINED'}${suffix}`;
  if (node.fail) return `${completing || node.base === 'ALLOCATED' ? 'FAILING' : 'FAIL'}${node.responding ? '' : '*'}`;
  if (node.base === 'ALLOCATED') return `ALLOCATED${suffix || (completing ? '+' : '')}`;
  if (completing && node.base !== 'DOWN') return `COMPLETING${suffix}`;
  return `${node.base}${suffix}`;
}
