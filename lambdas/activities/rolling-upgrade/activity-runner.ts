import { InvalidInputError, LockLostError, SessionNotFoundError, StaleWriteError } from '../../../core/errors';
import { cancelSwitchesAt, decideCancelRequested } from '../../../core/rolling-upgrade/cancel-decisions';
import { activeNodes, decideFailedAttempt, decideLocksLost, type StageOutcome } from '../../../core/rolling-upgrade/stage-decision';
import type { NodeRecord, Progress, Stage, UpgradeSession, WorkflowState } from '../../../core/rolling-upgrade/session';
import { applyDecision } from './apply-decision';
import { loadStepNodes, renewLocks } from './observe';
import { loadPlanRecords } from './advance-window';
import type { RollingUpgradeDependencies } from './dependencies';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';

export interface ActivityContext {
  session: UpgradeSession;
  progress: Progress;
  deps: RollingUpgradeDependencies;
  now: number;
}

/** One increment of a stage: load what the decision needs, decide (core), apply the decision. */
export type ActivityBody = (context: ActivityContext) => Promise<StageOutcome>;

/**
 * Runs one idempotent increment of `stage`, the way CRUS's watcher runs a handler:
 * - the stored progress is the truth: a retried or duplicated invocation that finds the session
 *   elsewhere does nothing and points the workflow at where the session really is;
 * - a cancel (state DELETING) seen at any stage switches to the delete sequence;
 * - an error posts "Processing step N in stage S failed - <detail>" and asks the workflow to
 *   retry after a backoff, instead of failing the execution.
 */
export async function runActivity(
  stage: Stage,
  state: WorkflowState,
  deps: RollingUpgradeDependencies,
  body: ActivityBody,
): Promise<WorkflowState> {
  const session = await deps.store.getSession(state.upgradeId);
  if (!session) throw new SessionNotFoundError(state.upgradeId);
  const progress = session.progress;
  const next = (p: Progress, waitSeconds: number, waitForOperator = false): WorkflowState => {
    const { waitForOperator: _previous, ...rest } = state;
    return { ...rest, stage: p.stage, step: p.step, waitSeconds, iteration: state.iteration + 1, ...(waitForOperator ? { waitForOperator } : {}) };
  };

  if (progress.stage !== stage) return next(progress, 0);

  const now = deps.clock.now();
  if (cancelSwitchesAt(session, stage)) {
    const cancelling = decideCancelRequested(stage, progress, now);
    await save(deps, session, progress, cancelling);
    return next(cancelling.progress, cancelling.waitSeconds);
  }

  try {
    await heartbeat(deps, session, progress);
    const outcome = await body({ session, progress, deps, now });
    // A stage that got through resets its error count; an unchanged progress is not written again.
    const saved: Progress = { ...outcome.progress, errorCount: 0 };
    if (JSON.stringify(saved) !== JSON.stringify(progress)) await deps.store.saveProgress(session.upgradeId, progress, saved);
    if (outcome.message) await deps.store.appendMessage(session.upgradeId, outcome.message);
    if (saved.step > progress.step && session.mode !== 'window') await publishStepFinished(deps, session, progress.step);
    return next(saved, outcome.waitSeconds, outcome.waitForOperator);
  } catch (err) {
    if (err instanceof StaleWriteError) {
      const fresh = await deps.store.getSession(state.upgradeId);
      return next(fresh?.progress ?? progress, 0);
    }
    if (err instanceof LockLostError) {
      // Another session holds these nodes now: record the loss and go on at once without them.
      const nodes = session.mode === 'window' ? await loadPlanRecords(deps, session) : await loadStepNodes(deps, session, progress.step);
      await recordLostLocks(deps, session, progress, nodes, err.lost);
      return next(progress, 0);
    }
    if (err instanceof InvalidInputError || err instanceof SessionNotFoundError) throw err;
    const failed = decideFailedAttempt(session, stage, progress, err);
    await save(deps, session, progress, failed);
    return next(failed.progress, failed.waitSeconds);
  }
}

/**
 * Every increment renews the leases of the current step's locks (the session's heartbeat), so that
 * only a dead session lets them run out; nodes another session took over meanwhile are recorded lost.
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
  const decision = decideLocksLost(session.mode === 'window' ? 'window' : progress.step, nodes, lost);
  if (!decision) return;
  await applyDecision(deps, session, { progress, waitSeconds: 0, actions: decision.actions });
  await deps.store.appendMessage(session.upgradeId, decision.message);
}

async function save(deps: RollingUpgradeDependencies, session: UpgradeSession, expected: Progress, outcome: StageOutcome): Promise<void> {
  await deps.store.saveProgress(session.upgradeId, expected, outcome.progress);
  if (outcome.message) await deps.store.appendMessage(session.upgradeId, outcome.message);
}

/** A step ended: how many of its nodes upgraded and failed (one read of the step's node records). */
async function publishStepFinished(deps: RollingUpgradeDependencies, session: UpgradeSession, step: number): Promise<void> {
  const nodes = session.planTaken ? await loadStepNodes(deps, session, step) : [];
  const count = (status: NodeRecord['status']) => nodes.filter((node) => node.status === status).length;
  await publishStatusEvents(deps, [
    statusEvent(
      DETAIL_TYPES.stepFinished,
      { kind: 'upgrade', sessionId: session.upgradeId, at: eventTime(deps.clock.now()), step, ...(session.planTaken ? { upgraded: count('UPGRADED'), failed: count('FAILED') } : {}) },
      `step-${step}`,
    ),
  ]);
}
