import type { Progress, Stage, UpgradeSession } from './session';
import { enterStage, type StageDecision } from './stage-decision';
import { stepText } from './step-plan';

/**
 * Stopping a session (state STOPPING), as against cancelling it: nodes in flight finish, nothing new
 * starts, and nodes not yet in flight are left exactly as they were; the session then ends STOPPED
 * and `rollout session resume` carries it on from where it stopped.
 *
 * In flight means: its reboot was asked for. A node still draining (its jobs running) or drained and
 * quiet, but not rebooted yet, is put back as it was (our drain lifted, an admin's kept, its lock
 * released) rather than waited for: a drain can wait hours for a job, and a stop is asked for now.
 * Lock-step: at STARTING the stop takes effect at once; a step being drained is put back (and is the
 * step a resume starts again); a step booting or returning finishes, and the stop takes effect before
 * the next. Mode window: the window starts nothing and puts back its draining nodes (advanceWindow),
 * then stops once nothing is in flight.
 */

const PUT_BACK: ReadonlySet<Stage> = new Set(['QUIESCING', 'QUIESCED']);

/** Whether a stop seen at `stage` (lock-step) switches to the stop sequence now; a step booting finishes first. */
export function stopSwitchesAt(session: UpgradeSession, stage: Stage): boolean {
  if (session.state !== 'STOPPING' || session.progress.stop !== undefined) return false;
  // The plan's end is no stop: the session completes.
  if (stage === 'STARTING') return !session.planTaken || session.progress.step < session.stepCount;
  return PUT_BACK.has(stage);
}

/**
 * STOPPING seen at `stage`: at STARTING, straight to the cleanup (which closes the session STOPPED);
 * while the step drains, its nodes are put back first (CRUS's resume-step sequence, which fails nothing).
 * Either way a resume starts this step again.
 */
export function decideStopRequested(session: Pick<UpgradeSession, 'stepCount'>, stage: Stage, progress: Progress, now: number): StageDecision {
  const stop = { stage: 'STARTING' as const, step: progress.step };
  const carry = { stop, ...(progress.counts ? { counts: progress.counts } : {}), ...(progress.halted ? { halted: progress.halted } : {}) };
  if (stage === 'STARTING') {
    return {
      progress: enterStage('CLEANUP', progress.step, now, carry),
      waitSeconds: 0,
      actions: [],
      message: `Stopping before ${stepText(progress.step, session.stepCount)}: no node of it was touched`,
    };
  }
  return {
    progress: enterStage('CANCELLING', progress.step, now, { ...carry, cancelMode: 'resume-step' }),
    waitSeconds: 0,
    actions: [],
    message: `Stopping at ${stepText(progress.step, session.stepCount)} in stage ${stage}: its nodes are put back as they were (not rebooted yet)`,
  };
}

/** Where a stopped session carries on: its progress back at the stage it stopped before, counts and window kept. */
export function resumedProgress(progress: Progress, now: number): Progress {
  if (progress.stage !== 'STOPPED' || !progress.stop) return progress;
  const { stop, stage: _stage, step: _step, stageStartedAt: _at, errorCount: _errors, ...rest } = progress;
  return enterStage(stop.stage, stop.step, now, rest);
}
