import {
  failedUpgrade,
  deletedUpgrade,
  phaseBackoffSeconds,
  withMessages,
  type EnvironmentUpgradePhase,
  type EnvironmentUpgradePointer,
  type EnvironmentUpgradeSession,
  type EnvironmentStatus,
} from '../../../core/environments';
import {
  EnvironmentResourceNotFoundError,
  InvalidInputError,
  RolloutError,
  SessionNotFoundError,
  StaleWriteError,
  UpgradeConflictError,
  UpgradeNotAllowedError,
  describeError,
  type FieldProblem,
} from '../../../core/errors';
import type { EnvironmentUpgradeDependencies } from './dependencies';

export interface PhaseContext {
  session: EnvironmentUpgradeSession;
  deps: EnvironmentUpgradeDependencies;
  now: number;
}

/** What an increment decided: the session as it is to be saved, and what the workflow does next. */
export interface PhaseOutcome {
  session: EnvironmentUpgradeSession;
  waitSeconds: number;
  start?: EnvironmentUpgradePointer['start'];
  following?: boolean;
}

export type PhaseBody = (context: PhaseContext) => Promise<PhaseOutcome>;

/** The workflow's pointer at a stored session. */
export function pointerTo(
  session: EnvironmentUpgradeSession,
  from: Pick<EnvironmentUpgradePointer, 'iteration' | 'iterationLimit' | 'generation'>,
  extra: Partial<EnvironmentUpgradePointer> = {},
): EnvironmentUpgradePointer {
  return {
    upgradeId: session.upgradeId,
    phase: session.progress.phase,
    waitSeconds: 0,
    iteration: from.iteration,
    iterationLimit: from.iterationLimit,
    generation: from.generation,
    ...(session.progress.phase === 'FAILED' ? { cause: failureLine(session) } : {}),
    ...extra,
  };
}

function failureLine(session: EnvironmentUpgradeSession): string {
  const problems = session.failure?.problems ?? [];
  return `${session.failure?.error ?? 'failed'}: ${problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)).join('; ')}`;
}

/** Errors that no retry can fix: the request or the environments refuse the upgrade. */
export function isRefusal(err: unknown): err is InvalidInputError | UpgradeConflictError | UpgradeNotAllowedError | EnvironmentResourceNotFoundError {
  return (
    err instanceof InvalidInputError ||
    err instanceof UpgradeConflictError ||
    err instanceof UpgradeNotAllowedError ||
    err instanceof EnvironmentResourceNotFoundError
  );
}

/** The problems an error names, for the session's failure. */
export function problemsOf(err: unknown): FieldProblem[] {
  if (err instanceof InvalidInputError || err instanceof UpgradeConflictError) return err.problems;
  if (err instanceof UpgradeNotAllowedError || err instanceof EnvironmentResourceNotFoundError) return [{ field: err.field ?? '', message: err.message }];
  return [{ field: '', message: describeError(err) }];
}

/**
 * Runs one idempotent increment of `phase`, as the rolling upgrade's stages run:
 * - the stored session is the truth: an increment that finds it elsewhere points the workflow there;
 * - a deletion seen before a child runs ends the session DELETED (the phases with a child pass it on themselves);
 * - a refusal (the request, the environments) fails the session naming the fields; any other error
 *   posts "Processing phase P failed - <detail>" and the phase is tried again after a backoff.
 */
export async function runPhase(
  phase: EnvironmentUpgradePhase,
  pointer: EnvironmentUpgradePointer,
  deps: EnvironmentUpgradeDependencies,
  body: PhaseBody,
): Promise<EnvironmentUpgradePointer> {
  const stored = await deps.upgrades.getUpgrade(pointer.upgradeId);
  if (!stored) throw new SessionNotFoundError(pointer.upgradeId);
  const { session, revision } = stored;
  const next = { iteration: pointer.iteration + 1, iterationLimit: pointer.iterationLimit, generation: pointer.generation };
  if (session.progress.phase !== phase) return pointerTo(session, next);
  const now = deps.clock.now();
  const save = async (changed: EnvironmentUpgradeSession) => {
    if (JSON.stringify(changed) !== JSON.stringify(session)) await deps.upgrades.saveUpgrade(changed, revision);
    return changed;
  };

  if (session.state === 'DELETING' && (phase === 'CLONING' || phase === 'ASSIGNING')) {
    return pointerTo(await save(deletedUpgrade(session, 'nothing more is done (the seed and assignments made so far stay)', now)), next);
  }
  try {
    const outcome = await body({ session, deps, now });
    const saved = await save({ ...outcome.session, progress: { ...outcome.session.progress, errorCount: 0 } });
    return pointerTo(saved, next, {
      waitSeconds: outcome.waitSeconds,
      ...(outcome.start ? { start: outcome.start } : {}),
      ...(outcome.following ? { following: true } : {}),
    });
  } catch (err) {
    if (err instanceof StaleWriteError) {
      const fresh = await deps.upgrades.getUpgrade(pointer.upgradeId);
      return pointerTo(fresh?.session ?? session, next);
    }
    if (err instanceof SessionNotFoundError && err.upgradeId === session.upgradeId) throw err;
    if (isRefusal(err)) return pointerTo(await save(failedUpgrade(session, err.name, problemsOf(err), now)), next);
    if (!(err instanceof RolloutError)) throw err;
    const errorCount = session.progress.errorCount + 1;
    const retried = await save(
      withMessages({ ...session, progress: { ...session.progress, errorCount } }, `Processing phase ${phase} failed - ${err.message}`),
    );
    return pointerTo(retried, next, { waitSeconds: phaseBackoffSeconds(session.rollingUpgrade?.pollIntervalSeconds ?? 30, errorCount - 1) });
  }
}

/** Sets an environment's status (a read and a conditional write, read again once if it changed meanwhile). */
export async function setEnvironmentStatus(deps: EnvironmentUpgradeDependencies, environmentId: number, status: EnvironmentStatus): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const stored = await deps.environments.getEnvironment(environmentId);
    if (!stored || stored.environment.status === status) return;
    try {
      await deps.environments.replaceEnvironment({ ...stored.environment, status }, stored.revision);
      return;
    } catch (err) {
      if (!(err instanceof StaleWriteError) || attempt > 0) throw err;
    }
  }
}
