import { ClaimedElsewhereError, InvalidInputError, LockLostError, SessionNotFoundError, StaleWriteError } from '../../../core/errors';
import { cancelSwitchesAt, decideCancelRequested } from '../../../core/rolling-upgrade/cancel-decisions';
import { decideStopRequested, stopSwitchesAt } from '../../../core/rolling-upgrade/stop-decisions';
import {
  activeNodes,
  addCounts,
  decideClaimedElsewhere,
  decideFailedAttempt,
  decideLocksLost,
  siteWaitEvents,
  type StageOutcome,
} from '../../../core/rolling-upgrade/stage-decision';
import type { NodeRecord, Progress, Stage, UpgradeSession, WorkflowState } from '../../../core/rolling-upgrade/session';
import { performDecision } from './perform-decision';
import { remadeEstimate } from './run-estimate';
import { loadStepNodes, loadWindowInFlight, renewLocks } from './observe';
import { lockLeaseSeconds, type RollingUpgradeDependencies } from './dependencies';
import { heartbeatDue } from '../node-claims';
import { describeError } from '../../../core/errors';
import { BACKSTOP_POLLS, SITE_TRIGGER_EVENTS } from '../../../core/site/site-event';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';

export interface StageIncrementContext {
  session: UpgradeSession;
  progress: Progress;
  deps: RollingUpgradeDependencies;
  now: number;
  /** The heartbeat of the session's locks in this increment (LockHeartbeat): the window renews its own when it is due. */
  locks: LockHeartbeat;
}

/**
 * The session's locks in one increment: whether the heartbeat is due (a quarter lease after the last renewal,
 * heartbeatDue), and when they were last renewed, counting this increment's heartbeat: every lock the session holds
 * was renewed then or taken since. The check before acting (performDecision) renews only when that is a quarter
 * lease old too.
 */
export interface LockHeartbeat {
  due: boolean;
  renewedAt: number | undefined;
}

/** One increment of a stage: load what the decision needs, decide (core), apply the decision. */
export type StageIncrement = (context: StageIncrementContext) => Promise<StageOutcome>;

/**
 * Runs one idempotent increment of `stage`, the way CRUS's watcher runs a handler:
 * - the stored progress is the truth: a retried or duplicated invocation that finds the session
 *   elsewhere does nothing and points the workflow at where the session really is;
 * - a cancel (state DELETING) seen at any stage switches to the delete sequence;
 * - an error posts "Processing step N in stage S failed - <detail>" and asks the workflow to
 *   retry after a backoff, instead of failing the execution.
 */
export async function runActivity(stage: Stage, state: WorkflowState, deps: RollingUpgradeDependencies, body: StageIncrement): Promise<WorkflowState> {
  const session = await deps.store.getSession(state.upgradeId);
  if (!session) throw new SessionNotFoundError(state.upgradeId);
  const progress = session.progress;
  const next = (p: Progress, waitSeconds: number, waitForOperator = false, siteEventWait?: WorkflowState['siteEventWait']): WorkflowState => {
    const { waitForOperator: _previous, siteEventWait: _previousWait, ...rest } = state;
    return {
      ...rest,
      stage: p.stage,
      step: p.step,
      waitSeconds,
      iteration: state.iteration + 1,
      ...(waitForOperator ? { waitForOperator } : {}),
      ...(siteEventWait ? { siteEventWait } : {}),
    };
  };

  if (progress.stage !== stage) return next(progress, 0);

  const now = deps.clock.now();
  if (cancelSwitchesAt(session, stage)) {
    const cancelling = decideCancelRequested(session, stage, progress, now);
    await save(deps, session, progress, cancelling);
    await releaseTriggersAtEnd(deps, session, cancelling.progress.stage);
    return next(cancelling.progress, cancelling.waitSeconds);
  }
  if (stopSwitchesAt(session, stage)) {
    const stopping = decideStopRequested(session, stage, progress, now);
    await save(deps, session, progress, stopping);
    await releaseTriggersAtEnd(deps, session, stopping.progress.stage);
    return next(stopping.progress, stopping.waitSeconds);
  }

  try {
    const due = heartbeatDue(state.locksRenewedAt, now, lockLeaseSeconds(deps.settings, session));
    const locks: LockHeartbeat = { due, renewedAt: due ? now : state.locksRenewedAt };
    if (due) await heartbeat(deps, session, progress);
    const outcome = await body({ session, progress, deps, now, locks });
    // A stage that got through resets its error count; an unchanged progress is not written again.
    let saved: Progress = { ...withCounts(outcome.progress, progress), errorCount: 0 };
    // A lock-step step ended: its nodes are counted in the same conditional write that moves the session on.
    const finishedStep =
      saved.step > progress.step && session.mode !== 'window' && session.planTaken ? await loadStepNodes(deps, session, progress.step) : undefined;
    if (finishedStep) saved = { ...saved, counts: addCounts(progress.counts, finishedStep) };
    // The ETA moves with the counts; between two changes it stays as it was (a stage's new progress starts without it).
    const estimate =
      JSON.stringify(saved.counts) !== JSON.stringify(progress.counts)
        ? await remadeEstimate(deps, session, progress, saved, finishedStep, now)
        : progress.estimate;
    const { estimate: _previous, ...withoutEstimate } = saved;
    saved = saved.stage === 'COMPLETE' || saved.stage === 'STOPPED' || !estimate ? withoutEstimate : { ...withoutEstimate, estimate };
    if (JSON.stringify(saved) !== JSON.stringify(progress)) await deps.store.saveProgress(session.upgradeId, progress, saved);
    if (outcome.message) await deps.store.messages.append(session.upgradeId, outcome.message);
    if (saved.step > progress.step && session.mode !== 'window') await publishStepFinished(deps, session, progress.step, finishedStep ?? []);
    const triggers = (await releaseTriggersAtEnd(deps, session, saved.stage)) ?? (await armTriggers(deps, session, saved.stage, now));
    // The renewal is recorded once the increment got through (a failed one renews again at the next).
    return {
      ...next(saved, outcome.waitSeconds, outcome.waitForOperator, siteEventWait(deps, { ...session, ...triggers }, outcome)),
      ...(locks.renewedAt !== undefined ? { locksRenewedAt: locks.renewedAt } : {}),
    };
  } catch (err) {
    if (err instanceof StaleWriteError) {
      const fresh = await deps.store.getSession(state.upgradeId);
      return next(fresh?.progress ?? progress, 0);
    }
    if (err instanceof LockLostError || err instanceof ClaimedElsewhereError) {
      // Another session holds these nodes now, or another control plane's run claims them at the site:
      // record them left alone and go on at once without them.
      const nodes = session.mode === 'window' ? await loadWindowInFlight(deps, session) : await loadStepNodes(deps, session, progress.step);
      if (err instanceof LockLostError) await recordLostLocks(deps, session, progress, nodes, err.lost);
      else await recordClaimedElsewhere(deps, session, progress, nodes, err.claims);
      return next(progress, 0);
    }
    if (err instanceof InvalidInputError || err instanceof SessionNotFoundError) throw err;
    // What the attempt saved before it failed (the boot request time; a window's intent: nodes entering
    // the index before their drain) is kept: the error count goes on the progress as stored now.
    const fresh = await deps.store.getSession(state.upgradeId);
    const stored = fresh?.progress ?? progress;
    if (stored.stage !== progress.stage || stored.step !== progress.step) return next(stored, 0);
    const { message, ...failed } = decideFailedAttempt(session, stage, stored, err);
    // A fault that lasts (a group that does not exist yet) is said once, not at every retry.
    const repeated = message === (await deps.store.messages.latest(session.upgradeId));
    await save(deps, session, stored, repeated ? failed : { ...failed, message });
    // A cancel asked for while the site call stalled is acted on at once, not after the backoff.
    return next(failed.progress, fresh && cancelSwitchesAt(fresh, stage) ? 0 : failed.waitSeconds);
  }
}

/**
 * How the workflow waits after an increment whose outcome waits for the site (StageOutcome.siteWait): parked until
 * an event that can end the wait is delivered, or the backstop poll (or sooner the decision's own recheck: a timeout
 * running out; or half the locks' lease), when the site delivers every kind that can end it: a node's drained, up
 * and down through the session's triggers, a health check's end through the command transport's notifications
 * (performDecision keeps a command wait only where the transport sends them). Otherwise undefined: the wait is the
 * poll. A node's boot and return after it are Slurm events only after `scontrol reboot` (Slurm fires `up` as it
 * registers); after a boot service's boot (BOS) the node re-registers without one: those waits stay a poll.
 */
function siteEventWait(deps: RollingUpgradeDependencies, session: UpgradeSession, outcome: StageOutcome): WorkflowState['siteEventWait'] {
  const wait = outcome.siteWait;
  if (!wait || outcome.waitSeconds <= 0 || outcome.waitForOperator) return undefined;
  if (wait.afterBoot && !deps.site.bootService.progressFromNodes) return undefined;
  const events = siteWaitEvents(wait) ?? [];
  const armed = session.siteTriggers && 'backstopSeconds' in session.siteTriggers ? session.siteTriggers : undefined;
  if (events.length === 0 || (!armed && events.some((kind) => kind !== 'command'))) return undefined;
  const backstopSeconds = armed?.backstopSeconds ?? deps.site.workloadManager.triggers?.backstopSeconds ?? BACKSTOP_POLLS * session.pollIntervalSeconds;
  // Never parked past half the locks' lease: the heartbeat at the wake renews them before anyone may take them over.
  const leaseBound = Math.floor(lockLeaseSeconds(deps.settings, session) / 2);
  const seconds = Math.max(1, Math.min(backstopSeconds, wait.recheckSeconds ?? Infinity, leaseBound));
  return { seconds, seen: session.siteEventCount ?? 0, events };
}

/** The stages after which a session's triggers have nothing left to resume. */
const ENDED_STAGES: ReadonlySet<Stage> = new Set(['COMPLETE', 'STOPPED']);

/**
 * Sets the session's triggers once its plan is taken (issue 29): one permanent trigger per event on its nodes,
 * through the workload manager's SiteTriggers (absent: every wait stays a poll). Set once; a site that refuses
 * them (strigger is for root and SlurmUser only) is said once, and the session polls.
 */
async function armTriggers(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  stage: Stage,
  now: number,
): Promise<Pick<UpgradeSession, 'siteTriggers'> | undefined> {
  const triggers = deps.site.workloadManager.triggers;
  if (!triggers || session.siteTriggers || !session.planTaken || ENDED_STAGES.has(stage) || session.state !== 'UPDATING') return undefined;
  // The plan's names: a site whose Slurm names them otherwise (CSM) maps them (NameMappedWorkloadManager).
  const nodes = await deps.store.getPlanSlice(session.upgradeId, 0, session.nodeCount);
  const backstopSeconds = triggers.backstopSeconds ?? BACKSTOP_POLLS * session.pollIntervalSeconds;
  let armed: NonNullable<UpgradeSession['siteTriggers']>;
  let message: string;
  try {
    const ids = await triggers.arm(session.upgradeId, nodes, SITE_TRIGGER_EVENTS);
    armed = { backstopSeconds, armedAt: now };
    message = `Site triggers set (strigger ${ids.join(', ')}: ${SITE_TRIGGER_EVENTS.join(', ')} on ${nodes.length} node(s)): waits for nodes are resumed by their firings, with a backstop poll every ${backstopSeconds} s`;
  } catch (err) {
    // Some may have been set before one failed: cleared now if the site lets us, and at the session's end again.
    await triggers.disarm(session.upgradeId).catch(() => 0);
    armed = { unavailable: describeError(err), at: now };
    message = `Site triggers could not be set, the session polls every ${session.pollIntervalSeconds} s: ${describeError(err)}`;
  }
  await deps.store.setSiteTriggers(session.upgradeId, armed);
  await deps.store.messages.append(session.upgradeId, message);
  return { siteTriggers: armed };
}

/**
 * Release Site Triggers: an execution that failed (an error no stage absorbed) clears its session's triggers before
 * it ends, so that none stays in `strigger --get` while nothing runs the session; a resume sets them again. Its
 * input is the failed state (its `upgradeId`, when the session was opened); it returns it unchanged.
 */
export async function releaseSiteTriggers(state: Partial<WorkflowState>, deps: RollingUpgradeDependencies): Promise<Partial<WorkflowState>> {
  const triggers = deps.site.workloadManager.triggers;
  if (state.upgradeId === undefined || !triggers) return state;
  const session = await deps.store.getSession(state.upgradeId);
  // A session whose record is gone (removed under it) is found by its triggers' program alone.
  if (session) await releaseTriggers(deps, session);
  else await triggers.disarm(state.upgradeId);
  return state;
}

/**
 * Clears the session's triggers once it completed, was cancelled or stopped (a resume sets them again): none of
 * a finished session stays in `strigger --get`. A site that fails the clear is said, with what to run by hand.
 */
async function releaseTriggersAtEnd(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  stage: Stage,
): Promise<Pick<UpgradeSession, 'siteTriggers'> | undefined> {
  return ENDED_STAGES.has(stage) ? releaseTriggers(deps, session) : undefined;
}

/** Clears the session's triggers and their record on it (a site that fails the clear is said); undefined when none were set. */
async function releaseTriggers(deps: RollingUpgradeDependencies, session: UpgradeSession): Promise<Pick<UpgradeSession, 'siteTriggers'> | undefined> {
  const triggers = deps.site.workloadManager.triggers;
  if (!session.siteTriggers) return undefined;
  // Cleared whether they were all set or a set failed part way (some may be there).
  if (triggers) {
    try {
      const cleared = await triggers.disarm(session.upgradeId);
      await deps.store.messages.append(session.upgradeId, `Site triggers cleared (${cleared})`);
    } catch (err) {
      await deps.store.messages.append(
        session.upgradeId,
        `Site triggers could not be cleared: ${describeError(err)}; clear them with \`strigger --get\` and \`strigger --clear --id=N\` (their program names --session ${session.upgradeId})`,
      );
    }
  }
  await deps.store.setSiteTriggers(session.upgradeId, undefined);
  return { siteTriggers: undefined };
}

/**
 * The session's heartbeat, when due (a quarter lease apart): renews the leases of the current step's locks, so
 * that only a dead session lets them run out; nodes another session took over meanwhile are recorded lost.
 */
async function heartbeat(deps: RollingUpgradeDependencies, session: UpgradeSession, progress: Progress): Promise<void> {
  // Mode window renews the locks of its nodes in flight itself (advanceWindow), wherever they are in the plan.
  if (!session.planTaken || session.mode === 'window' || progress.step >= session.stepCount) return;
  const nodes = activeNodes(await loadStepNodes(deps, session, progress.step));
  const lost = await renewLocks(deps, session, nodes);
  await recordLostLocks(deps, session, progress, nodes, lost);
}

async function recordLostLocks(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  progress: Progress,
  nodes: readonly NodeRecord[],
  lost: ReadonlyMap<string, string | undefined>,
): Promise<void> {
  const decision = decideLocksLost(session.mode === 'window' ? 'window' : { step: progress.step, stepCount: session.stepCount }, nodes, lost);
  if (!decision) return;
  await performDecision(deps, session, { progress, waitSeconds: 0, actions: decision.actions });
  await deps.store.messages.append(session.upgradeId, decision.message);
}

async function recordClaimedElsewhere(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  progress: Progress,
  nodes: readonly NodeRecord[],
  claims: ReadonlyMap<string, string>,
): Promise<void> {
  const decision = decideClaimedElsewhere(session.mode === 'window' ? 'window' : { step: progress.step, stepCount: session.stepCount }, nodes, claims);
  if (!decision) return;
  await performDecision(deps, session, { progress, waitSeconds: 0, actions: decision.actions });
  await deps.store.messages.append(session.upgradeId, decision.message);
}

/** A stage that does not count nodes keeps the counts it was given (a new stage's progress starts without them). */
function withCounts(next: Progress, previous: Progress): Progress {
  return next.counts !== undefined || previous.counts === undefined ? next : { ...next, counts: previous.counts };
}

async function save(deps: RollingUpgradeDependencies, session: UpgradeSession, expected: Progress, outcome: StageOutcome): Promise<void> {
  await deps.store.saveProgress(session.upgradeId, expected, withCounts(outcome.progress, expected));
  if (outcome.message) await deps.store.messages.append(session.upgradeId, outcome.message);
}

/** A step ended: how many of its nodes upgraded and failed (its records, read once after the step's last actions). */
async function publishStepFinished(deps: RollingUpgradeDependencies, session: UpgradeSession, step: number, nodes: readonly NodeRecord[]): Promise<void> {
  const count = (status: NodeRecord['status']) => nodes.filter((node) => node.status === status).length;
  await publishStatusEvents(deps, [
    statusEvent(
      DETAIL_TYPES.stepFinished,
      {
        kind: 'upgrade',
        sessionId: session.upgradeId,
        at: eventTime(deps.clock.now()),
        step: step + 1,
        stepCount: session.stepCount,
        ...(session.planTaken ? { upgraded: count('UPGRADED'), failed: count('FAILED') } : {}),
      },
      `step-${step}`,
    ),
  ]);
}
