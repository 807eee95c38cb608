import type { Stage } from './session';

const BEFORE_BOOT: ReadonlySet<Stage> = new Set(['STARTING', 'QUIESCING', 'QUIESCED']);

/**
 * What cancelling does to the nodes, by CRUS's rules: before booting in step 0, resume the
 * step's nodes and fail nothing; otherwise fail every node from the current step on that
 * has not completed, with reason `upgrade-session-deleted-before-completion`.
 */
export function deletionOutcome(step: number, stage: Stage): 'resume-step' | 'fail-remaining' | 'nothing' {
  if (stage === 'CLEANUP' || stage === 'COMPLETE') return 'nothing';
  return step === 0 && BEFORE_BOOT.has(stage) ? 'resume-step' : 'fail-remaining';
}

/** Backoff before retrying a stage that failed `errorCount` times in a row: doubles, capped. */
export function retryDelaySeconds(errorCount: number, baseSeconds: number, maxSeconds = 300): number {
  const exponent = Math.min(Math.max(errorCount - 1, 0), 16);
  return Math.min(baseSeconds * 2 ** exponent, maxSeconds);
}
