import type { UpgradeSession } from './session';

/** What a session waits for from its operator: an unpause, or the approval of a batch (0-based wave). */
export type OperatorWait = { paused: true } | { wave: number };

/**
 * What the session waits for from its operator now, as the stored session says (undefined: nothing,
 * or the session is no longer UPDATING: a cancel must wake it). A pause comes first: an approval
 * given while paused lets nothing start until the pause is lifted.
 */
export function operatorWait(session: Pick<UpgradeSession, 'state' | 'operator' | 'progress'>): OperatorWait | undefined {
  if (session.state !== 'UPDATING') return undefined;
  if (session.operator?.paused) return { paused: true };
  const wave = session.progress.window?.awaitingApproval;
  if (wave === undefined || session.operator?.approvedWaves?.includes(wave)) return undefined;
  return { wave };
}
