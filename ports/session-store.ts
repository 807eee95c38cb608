import type { SiteEventKind } from '../core/site/site-event';
import type { NodeRecord, Progress, SessionState, UpgradeSession } from '../core/rolling-upgrade/session';
import type { OperatorWait } from '../core/rolling-upgrade/operator-gate';
import type { NodeLockStore } from './node-locks';
import type { RunStore } from './run-store';

export type { NodeLock } from './node-locks';

/** An operator's change to a window's gate: a pause or its lifting, or the approval of a batch (0-based wave). */
export type OperatorGateChange = { paused: boolean } | { approveWave: number };

/**
 * Durable state of rolling-upgrade sessions: the session and its progress, the plan snapshot,
 * each node's status, the messages (`messages`), and per-node locks shared by every session (`locks`).
 * Only single-item conditional writes: no transactions (DynamoDB Local stand-ins lack them).
 */
export interface SessionStore extends RunStore<UpgradeSession> {
  /** The node locks every workflow of this store shares (a session's own among them). */
  readonly locks: NodeLockStore;
  /** Writes the plan snapshot (may be empty), then the session. Idempotent: creating an existing id again is a no-op. */
  createSession(session: UpgradeSession, plan: readonly string[]): Promise<void>;
  /**
   * Writes the plan snapshot of a session created without one (with the workload manager's names of
   * its nodes, where they differ), then sets planTaken, nodeCount and stepCount on the session.
   * Idempotent (rewrites the same chunks).
   */
  savePlan(upgradeId: string, plan: readonly string[], wlmNames?: readonly string[]): Promise<void>;
  getSession(upgradeId: string): Promise<UpgradeSession | undefined>;
  /**
   * Replaces the progress if it is still at `expected` (step and stage), else throws StaleWriteError.
   * This is what makes a retried or duplicated handler invocation harmless.
   */
  saveProgress(upgradeId: string, expected: Pick<Progress, 'step' | 'stage'>, progress: Progress): Promise<void>;
  /** Sets the session's state (and `completed`). */
  setState(upgradeId: string, state: SessionState, completed: boolean): Promise<void>;
  /** UPDATING, STOPPING or STOPPED → DELETING. Throws SessionNotFoundError or SessionNotCancellableError. */
  requestCancel(upgradeId: string): Promise<UpgradeSession>;
  /** UPDATING → STOPPING (asking again while STOPPING is no error). Throws SessionNotFoundError or SessionNotStoppableError. */
  requestStop(upgradeId: string): Promise<UpgradeSession>;
  /**
   * A person's resume of a stopped session (a STOPPING one's stop is withdrawn first: SESSION_STOP_WITHDRAWN): STOPPED → UPDATING with its progress back where it stopped
   * (`progress` is that progress; written only while the session is still STOPPED in stage STOPPED), or,
   * for one cancelled while stopped (DELETING in stage STOPPED), the progress alone. Returns the session
   * as it is after it. Throws SessionNotFoundError.
   */
  reopenStopped(upgradeId: string, progress: Progress): Promise<UpgradeSession>;
  /**
   * Removes a session that has ended (READY, DELETED, HALTED), its plan, node records and messages,
   * as CRUS removes a deleted session; returns it as it was. SessionNotFoundError; or
   * SessionNotCancellableError for one that has not ended (cancel it first).
   */
  removeEnded(upgradeId: string): Promise<UpgradeSession>;
  /** Records that an execution of generation `generation` runs the session (kept only if newer than the stored one). */
  noteGeneration(upgradeId: string, generation: number): Promise<void>;

  /**
   * The operator's gate (mode window): sets `operator.paused`, or adds a wave to
   * `operator.approvedWaves`. Only the session's `operator` attribute is written, so it never races
   * with the workflow's progress writes; returns the session as that write left it. Throws SessionNotFoundError.
   */
  setOperatorGate(upgradeId: string, change: OperatorGateChange): Promise<UpgradeSession>;
  /**
   * Stores the workflow's task token on the session (`operator.taskToken`) in one conditional write,
   * if the session still waits for its operator as `wait` says (UPDATING, and paused, or the wave not
   * approved). Returns false, storing nothing, when it no longer does. Throws SessionNotFoundError.
   */
  parkForOperator(upgradeId: string, taskToken: string, wait: OperatorWait): Promise<boolean>;

  /**
   * Stores the token of `Wait For Site Event` on the session in one conditional write, if it still runs (UPDATING,
   * or STOPPING and DELETING while its nodes in flight finish) and nothing was delivered since its last increment
   * read `seen` (its siteEventCount then: a firing, or an operator's request, adds one).
   * Returns false, storing nothing, when one was: the workflow looks at the site again at once.
   */
  parkForSiteEvent(upgradeId: string, taskToken: string, seen: number, events: readonly SiteEventKind[]): Promise<boolean>;
  /**
   * A site event of kind `event` for the session was delivered (an operator's request: no kind): counts it and
   * takes the parked token (one write), which the caller wakes. A firing of a kind the parked wait does not end
   * (siteWaitEvents) changes nothing. Undefined when nothing was taken, or the session does not exist (any more).
   */
  noteSiteEvent(upgradeId: string, event?: SiteEventKind): Promise<{ taskToken?: string } | undefined>;
  /** Records the session's armed triggers (issue 29), or that they were cleared (undefined). */
  setSiteTriggers(upgradeId: string, armed: UpgradeSession['siteTriggers']): Promise<void>;

  /** Node names at plan positions [start, end). */
  getPlanSlice(upgradeId: string, start: number, end: number): Promise<string[]>;
  /**
   * The workload manager's names at plan positions [start, end), saved with the plan where they
   * differ from the inventory's (a CSM site: `nid000006` beside `x3000c0s19b1n0`); empty otherwise.
   */
  getPlanWlmNames(upgradeId: string, start: number, end: number): Promise<string[]>;
  /** Records of the named nodes; a node never written is NOT_STARTED with its plan index as given. */
  getNodes(upgradeId: string, nodes: readonly { name: string; index: number }[]): Promise<NodeRecord[]>;
  putNodes(upgradeId: string, records: readonly NodeRecord[]): Promise<void>;
  /** Every node ever written for the session (nodes never touched are absent: they are NOT_STARTED). */
  listNodes(upgradeId: string): Promise<NodeRecord[]>;
}
