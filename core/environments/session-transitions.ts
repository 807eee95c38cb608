import type { FieldProblem } from '../errors';
import { withMessages, type EnvironmentUpgradePhase, type EnvironmentUpgradeSession } from './environment-upgrade';

// How an environment upgrade session moves between phases: what the workflow's phases and the API record.

/** The session FAILED (phase FAILED), saying why. */
export function failedUpgrade(session: EnvironmentUpgradeSession, error: string, problems: FieldProblem[], now: number): EnvironmentUpgradeSession {
  const line = problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)).join('; ');
  return withMessages(
    { ...session, state: 'FAILED', completed: false, failure: { error, problems }, progress: { ...session.progress, phase: 'FAILED', phaseStartedAt: now } },
    `Environment upgrade failed in phase ${session.progress.phase} - ${line}`,
  );
}

/** The session ended by a deletion (state DELETED, phase COMPLETE). */
export function deletedUpgrade(session: EnvironmentUpgradeSession, note: string, now: number): EnvironmentUpgradeSession {
  return withMessages(
    { ...session, state: 'DELETED', completed: false, progress: { ...session.progress, phase: 'COMPLETE', phaseStartedAt: now } },
    `Environment upgrade deleted in phase ${session.progress.phase}: ${note}`,
  );
}

/** The session moved on to `phase`. */
export function upgradeInPhase(session: EnvironmentUpgradeSession, phase: EnvironmentUpgradePhase, now: number): EnvironmentUpgradeSession {
  return { ...session, progress: { ...session.progress, phase, phaseStartedAt: now } };
}
