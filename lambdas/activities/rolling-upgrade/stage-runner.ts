import { describeError, InvalidInputError, SessionNotFoundError, StaleWriteError } from '../../../core/errors';
import { deletionOutcome, retryDelaySeconds } from '../../../core/rolling-upgrade/deletion-rules';
import type { Progress, Stage, UpgradeSession, WorkflowState } from '../../../core/rolling-upgrade/session';
import type { RollingUpgradeDependencies } from './dependencies';

/** What one stage increment decided: the next progress, how long to wait, and what to tell the operator. */
export interface StageOutcome {
  progress: Progress;
  /** Seconds to wait before the next attempt (polling); 0 to go on at once. */
  waitSeconds: number;
  message?: string;
}

export interface StageContext {
  session: UpgradeSession;
  progress: Progress;
  deps: RollingUpgradeDependencies;
  now: number;
}

export type StageBody = (context: StageContext) => Promise<StageOutcome>;

/** Progress for the start of `stage` at `step`. */
export function enterStage(stage: Stage, step: number, now: number, carry: Partial<Progress> = {}): Progress {
  return { ...carry, step, stage, stageStartedAt: now, errorCount: 0 };
}

/**
 * Runs one idempotent increment of `stage`, the way CRUS's watcher runs a handler:
 * - the stored progress is the truth: a retried or duplicated invocation that finds the session
 *   elsewhere does nothing and points the workflow at where the session really is;
 * - a cancel (state DELETING) seen at any stage switches to the delete sequence;
 * - an error posts "Processing step N in stage S failed - <detail>" and asks the workflow to
 *   retry after a backoff, instead of failing the execution.
 */
export async function runStage(
  stage: Stage,
  state: WorkflowState,
  deps: RollingUpgradeDependencies,
  body: StageBody,
): Promise<WorkflowState> {
  const session = await deps.store.getSession(state.upgradeId);
  if (!session) throw new SessionNotFoundError(state.upgradeId);
  const progress = session.progress;
  const next = (p: Progress, waitSeconds: number): WorkflowState => ({
    ...state,
    stage: p.stage,
    step: p.step,
    waitSeconds,
    iteration: state.iteration + 1,
  });

  if (progress.stage !== stage) return next(progress, 0);

  const now = deps.clock.now();
  if (session.state === 'DELETING' && stage !== 'CANCELLING' && stage !== 'CLEANUP' && stage !== 'COMPLETE') {
    const mode = deletionOutcome(progress.step, stage);
    const cancelling = enterStage(mode === 'nothing' ? 'CLEANUP' : 'CANCELLING', progress.step, now, {
      ...(mode === 'nothing' ? {} : { cancelMode: mode }),
      ...(progress.bootSessionName ? { bootSessionName: progress.bootSessionName } : {}),
    });
    await saveOrResync(deps, session, progress, cancelling, `Session deleted at step ${progress.step} in stage ${stage}`);
    return next(cancelling, 0);
  }

  try {
    const outcome = await body({ session, progress, deps, now });
    // A stage that got through resets its error count; an unchanged progress is not written again.
    const saved: Progress = { ...outcome.progress, errorCount: 0 };
    if (JSON.stringify(saved) !== JSON.stringify(progress)) await deps.store.saveProgress(session.upgradeId, progress, saved);
    if (outcome.message) await deps.store.appendMessage(session.upgradeId, outcome.message);
    return next(saved, outcome.waitSeconds);
  } catch (err) {
    if (err instanceof StaleWriteError) {
      const fresh = await deps.store.getSession(state.upgradeId);
      return next(fresh?.progress ?? progress, 0);
    }
    if (err instanceof InvalidInputError || err instanceof SessionNotFoundError) throw err;
    const failed: Progress = { ...progress, errorCount: progress.errorCount + 1 };
    await deps.store.saveProgress(session.upgradeId, progress, failed);
    await deps.store.appendMessage(
      session.upgradeId,
      `Processing step ${progress.step} in stage ${stage} failed - ${describeError(err)}`,
    );
    return next(failed, retryDelaySeconds(failed.errorCount, session.pollIntervalSeconds));
  }
}

async function saveOrResync(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  expected: Progress,
  progress: Progress,
  message: string | undefined,
): Promise<void> {
  await deps.store.saveProgress(session.upgradeId, expected, progress);
  if (message) await deps.store.appendMessage(session.upgradeId, message);
}
