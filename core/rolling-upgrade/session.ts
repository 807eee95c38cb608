import type { SiteEventKind } from '../site/site-event';
import type { RESUME_CARRIES_ON } from '../session-control';
import type { UpgradeRequest } from './upgrade-request';

/**
 * CRUS's stages, plus ROLLING (mode window: every node moves through its own phases in one stage), plus
 * CANCELLING (CRUS's delete sequence), COMPLETE (the workflow's end) and STOPPED (the workflow's end for
 * a session that was stopped: `progress.stop` says where a resume carries on).
 */
export const STAGES = [
  'STARTING',
  'QUIESCING',
  'QUIESCED',
  'BOOTING',
  'BOOTED',
  'WLM_WAITING',
  'ROLLING',
  'CANCELLING',
  'CLEANUP',
  'COMPLETE',
  'STOPPED',
] as const;
export type Stage = (typeof STAGES)[number];

/**
 * CRUS's session states; DELETED is a tombstone kept for audit once a cancelled session is cleaned up;
 * HALTED: stopped on its failure budget (the reason is in progress.halted, or progress.window.halted);
 * STOPPING: an operator asked it to stop (nodes in flight finish, nothing new starts, untouched nodes
 * are left as they were); STOPPED: it did, and `rollout session resume` carries it on.
 */
export type SessionState = 'UPDATING' | 'READY' | 'DELETING' | 'DELETED' | 'HALTED' | 'STOPPING' | 'STOPPED';

/** The states a session's workflow ends in and never leaves: a DELETE may remove a session in one of them. */
export const ENDED_SESSION_STATES = ['READY', 'DELETED', 'HALTED'] as const satisfies readonly SessionState[];

/** Whether the session's workflow has ended (READY, DELETED or HALTED); STOPPED has not: a resume carries it on. */
export function isSessionEnded(state: SessionState): boolean {
  return (ENDED_SESSION_STATES as readonly SessionState[]).includes(state);
}

/** Whether no execution works on the session any more: it has ended, or it is STOPPED and waits for a resume. */
export function isSessionSettled(state: SessionState): boolean {
  return isSessionEnded(state) || state === 'STOPPED';
}

/**
 * An operator's cancel: the states it is accepted in (a stopped or stopping session too: its resume
 * applies CRUS's deletion rules) and the state it moves the session to.
 */
export const SESSION_CANCEL = { from: ['UPDATING', 'STOPPING', 'STOPPED'], to: 'DELETING' } as const satisfies {
  from: readonly SessionState[];
  to: SessionState;
};

/** An operator's stop: accepted while UPDATING (asking again while STOPPING is no error), it moves the session to STOPPING. */
export const SESSION_STOP = { from: ['UPDATING', 'STOPPING'], to: 'STOPPING' } as const satisfies { from: readonly SessionState[]; to: SessionState };

/**
 * A person's resume of a session whose stop nothing finished (STOPPING: its process died): the stop is
 * withdrawn and the session carries on (core/session-control.ts RESUME_CARRIES_ON). A lock-step stop
 * sequence already under way (progress.stop) puts its step back, then carries on where it would have resumed.
 */
export const SESSION_STOP_WITHDRAWN = { from: ['STOPPING'], to: 'UPDATING' } as const satisfies {
  from: readonly (SessionState & (typeof RESUME_CARRIES_ON)[number])[];
  to: SessionState;
};

/** Whether a session in `state` accepts a cancel (SESSION_CANCEL). */
export function isSessionCancellable(state: SessionState): boolean {
  return (SESSION_CANCEL.from as readonly SessionState[]).includes(state);
}

export type NodeStatus = 'NOT_STARTED' | 'IN_PROGRESS' | 'UPGRADED' | 'FAILED';

/** Where a node is inside its step; kept per node so that a retried handler knows what is already done. */
/** CHECKING: back in Slurm, its health check command running (healthCheck.command); it stays drained until the check passes. */
export type NodePhase = 'LOCKED' | 'DRAINING' | 'QUIESCED' | 'BOOTING' | 'BOOTED' | 'CHECKING' | 'DONE' | 'LOCK_LOST';

/** Failure reasons, as CRUS writes them into the WLM and the session (ours extend CRUS's where it had no timeout). */
export const FailureReason = {
  bootFailed: 'upgrading-boot-session-failed',
  wlmTimeout: 'upgrading-time-out-wlm-waiting',
  sessionDeleted: 'upgrade-session-deleted-before-completion',
  quiesceTimeout: 'upgrading-time-out-quiescing',
  bootTimeout: 'upgrading-time-out-booting',
  healthCheckFailed: 'upgrading-health-check-failed',
  /** The boot service would not reboot the node: outside the template's boot sets, or disabled in HSM (ours). */
  notInBootSet: 'upgrading-not-in-boot-set',
} as const;
export type FailureReason = (typeof FailureReason)[keyof typeof FailureReason];

/** What Slurm appends to a node's reason as it reboots or loses it (src/slurmctld/node_mgr.c, controller.c). */
const SLURM_REASON_SUFFIX = / : (?:reboot issued|reboot complete|reboot timed out|Not responding)$/;

/** A reason without what Slurm appended to it since it was set (an admin's reason as the admin wrote it). */
export function reasonAsSet(reason: string): string {
  let text = reason;
  while (SLURM_REASON_SUFFIX.test(text)) text = text.replace(SLURM_REASON_SUFFIX, '');
  return text;
}
export const COMPLETED_MESSAGE = 'Upgrade Session Completed';
export const NOT_COMPLETED_MESSAGE = 'Upgrade Session Not Completed';

/** Where the session stands; the only state a handler trusts (the workflow payload only points at it). */
export interface Progress {
  step: number;
  stage: Stage;
  /** Simulated or real epoch ms at which the current stage began (deadlines count from here). */
  stageStartedAt: number;
  /** The boot session of the current step, once started. */
  bootSessionName?: string;
  /** When the current step's boot was requested: a node is back only if it booted after this. */
  bootRequestedAt?: number;
  /** When the boot session finished: the WLM return timeout counts from here. */
  bootFinishedAt?: number;
  /** Since when the step has waited for nodes locked by another session (the wait is reported once). */
  lockWaitSince?: number;
  /** Consecutive failures of the current stage, for backoff. */
  errorCount: number;
  /** Which CRUS deletion rule the CANCELLING stage applies, fixed when the cancel is seen. */
  cancelMode?: 'resume-step' | 'fail-remaining' | 'record-remaining';
  /** Next plan index the CANCELLING stage has to fail (it works in bounded chunks). */
  cancelCursor?: number;
  /** Mode window: the scheduler's session-wide state (the per-op state lives in the node records). */
  window?: WindowProgress;
  /** The session is stopping (then STOPPED): where a resume carries on. */
  stop?: { stage: Stage; step: number };
  /** Lock-step: halted on its failure budget (maxFailed) before the next step; the window keeps its own in window.halted. */
  halted?: { reason: string; at: number };
  /**
   * When the session is expected to end, on its clock: the plan made again over the nodes left
   * (core/rolling-upgrade/estimate.ts), written with the counts, so a display reads it from the session item.
   */
  estimate?: { endsAt: number; basis: string };
  /**
   * Nodes upgraded and failed so far, for a progress display that reads the session item alone.
   * Lock-step adds a step's nodes when the step ends (and a cancel's chunks as they are failed);
   * mode window counts a node when it leaves the in-flight index, in the same write. Each is a
   * conditional write of the progress, so a retried increment never counts a node twice.
   */
  counts?: { upgraded: number; failed: number };
}

/** The annealer's session-wide state: small and bounded, so it fits on the session item at any fleet size. */
export interface WindowProgress {
  wave: number;
  approvedWaves: number[];
  paused: boolean;
  halted?: { reason: string; at: number };
  finishedAt?: number;
  /** Why startable nodes are not starting, as of the last increment (approval, bake, maintenance-window, paused, halted). */
  waiting?: string;
  /** What the run last said in a message it waits for, and when (it says so again once a poll interval has passed, or at once for another gate). */
  waitSaid?: { at: number; about: string };
  /** The batch (0-based wave) waiting for an operator's approval, as of the last increment. */
  awaitingApproval?: number;
  /** Boot sessions started so far: the next one is named `rollout-<id>-boot-<bootCount>`. */
  bootCount: number;
  /**
   * haltOnOutsideFailures: the nodes outside the plan already DOWN or FAIL at the first increment
   * (only those that go DOWN or FAIL later halt the run). Small on a healthy site.
   */
  outsideDownAtStart?: string[];
  /**
   * The in-flight index: plan positions of the nodes with an op in TRANSITION (at most maxUnavailable
   * + drainAhead), the only node records an increment reads. A node enters it before it is recorded
   * and drained (intent first) and leaves it in the write that counts it done.
   */
  inFlight?: number[];
  /** Every plan position's mark (core/rolling-upgrade/plan-marks.ts): TODO, upgraded, failed or gone (lock lost). */
  marks?: string;
  /** Ops of the current wave that ended (upgraded or failed), and when the last one did: the wave's quota and bake. */
  waveEnded?: number;
  waveLastEndedAt?: number;
  /** The session's counts when the current wave opened: a batch's counts are the difference when it closes. */
  waveStartCounts?: { upgraded: number; failed: number };
  /**
   * Plan positions whose drain ahead was lifted (no free slot when the job ended, or the run
   * stopped), one bit each (core/rolling-upgrade/plan-marks.ts): never drained ahead again, so a
   * node is drained at most twice.
   */
  releasedAhead?: string;
  /** Nodes in flight still draining, as of the last increment (the progress display). */
  draining?: number;
  /** Nodes in flight drained ahead, without a slot (not counted against maxUnavailable), as of the last increment. */
  ahead?: number;
  /** Nodes in flight by phase (DRAINING, BOOTING, BOOTED, CHECKING), as of the last increment: the progress display's live view. */
  phases?: Partial<Record<NodePhase, number>>;
  /** reserveSlots: how long a node holds its slot, learned from the nodes upgraded so far (core/rolling-upgrade/slot-plan.ts). */
  slotSeconds?: number;
}

export interface UpgradeSession extends UpgradeRequest {
  upgradeId: string;
  kind: 'ComputeUpgradeSession';
  state: SessionState;
  completed: boolean;
  /** On the session's clock: a simulated instant when `simulatedTime` (see wallCreatedAt). */
  createdAt: string;
  /** The session runs on simulated time (a simulated site): its instants are not dates, and are never shown as such. */
  simulatedTime?: boolean;
  /** On simulated time: the wall-clock instant it was created, for listing it among others. */
  wallCreatedAt?: string;
  /** Whether the plan snapshot (the starting group's members, in order) has been taken; it is taken once, at step 0. */
  planTaken: boolean;
  /** Nodes in the plan snapshot, and the number of steps they make (0 until the plan is taken). */
  nodeCount: number;
  stepCount: number;
  progress: Progress;
  /**
   * The newest generation its executions continued as new to (`<upgradeId>-g<n>`): a person's resume
   * starts its chain after it, so that its own continue-as-new never meets a name an earlier chain used.
   */
  generation?: number;
  /**
   * Mode window, the operator's gate: `rollout session pause` sets paused, `resume` clears it, and
   * `approve` adds the batch (0-based wave) waited for. Kept apart from the progress, which only the
   * workflow writes, so an operator's write never races with it; each increment reads both.
   */
  operator?: {
    paused?: boolean;
    approvedWaves?: number[];
    /**
     * The task token of the workflow's `Wait For Operator` state, stored by AwaitOperator while the
     * session waits for its operator: approve, resume and cancel send SendTaskSuccess with it.
     */
    taskToken?: string;
  };
  /**
   * Waits resumed by the site's events (issue 29), when the session armed the site's triggers at its start:
   * the backstop poll it waits on meanwhile, and when they were armed.
   */
  siteTriggers?: { backstopSeconds: number; armedAt: number } | { unavailable: string; at: number };
  /**
   * How many site events (trigger firings for this session) were delivered: each delivery adds one and takes
   * `siteWaitToken`, and a workflow parks only while the count is the one its last increment read, so a firing
   * between that read and the park wakes it at once (parkForSiteEvent).
   */
  siteEventCount?: number;
  /** The task token of `Wait For Site Event`, stored while the workflow waits for a firing (or its backstop). */
  siteWaitToken?: string;
  /** The events that end that wait (siteWaitEvents); absent: any. A firing of another kind neither wakes nor counts. */
  siteWaitEvents?: SiteEventKind[];
}

export interface NodeRecord {
  name: string;
  /** Position in the plan snapshot; the step is `Math.floor(index / upgradeStepSize)`. */
  index: number;
  status: NodeStatus;
  phase?: NodePhase;
  reason?: string;
  /** The fencing token of the node's lock while this session holds it: every node-changing call is checked against it. */
  lockToken?: number;
  /** Mode window: the node's scheduler op (absent: TODO). */
  op?: WindowOp;
  /**
   * Mode window: the boot session this node was booted in, when (a node is back only once it
   * registered after it), when its start was last asked again (it had failed or was lost: the boot
   * timeout counts from then) and when the boot service reported it.
   */
  boot?: { session: string; requestedAt: number; retriedAt?: number; finishedAt?: number };
  /** Phase CHECKING: the health check command started on the site's command transport (its id there) and when. */
  check?: { id: string; startedAt: number };
  /**
   * When the node entered each phase it went through (epoch ms, the session's clock): the live view's
   * "since" and the report's timeline. Stamped when a record is written in a new phase; kept per node
   * record (never in a payload), so it costs nothing at fleet scale.
   */
  phaseTimes?: Partial<Record<NodePhase, number>>;
}

/** A node's op as the annealer keeps it (core/scheduling Operation), minus what the plan gives (id, rank). */
export interface WindowOp {
  state: 'TRANSITION' | 'ACTIVE' | 'ERROR';
  holdsSlot?: boolean;
  wave?: number;
  startedAt?: number;
  admittedAt?: number;
  endedAt?: number;
}

/** The slim state the workflow carries between states: a pointer, never node lists (256 KiB quota). */
export interface WorkflowState {
  upgradeId: string;
  stage: Stage;
  step: number;
  /** Seconds the workflow should wait before the next stage attempt; 0 to go on at once. */
  waitSeconds: number;
  /** Loop iterations in this execution; the workflow continues as a new execution past a limit (history quota). */
  iteration: number;
  /** Loop iterations after which the execution continues as a new one. */
  iterationLimit: number;
  /** How many executions came before this one in the session's chain. */
  generation: number;
  /** The session waits for its operator (an approval, a pause) with nothing in flight: park on a task token instead of polling. */
  waitForOperator?: boolean;
  /**
   * When the session's node locks were last renewed (epoch ms): the heartbeat runs a quarter lease apart
   * (heartbeatDue in lambdas/activities/node-claims.ts); absent: at the next increment.
   */
  locksRenewedAt?: number;
  /**
   * The session waits for the site to change with its triggers armed: park on a task token until a firing is
   * delivered, or `seconds` passed (the backstop poll, or sooner a timed recheck); `seen` is the session's
   * siteEventCount the increment read before it read the site; `events`, the kinds that end it (empty: any).
   */
  siteEventWait?: { seconds: number; seen: number; events: SiteEventKind[] };
}
