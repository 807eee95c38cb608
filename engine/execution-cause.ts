import type { RunOutcome } from './runtime';

/** The Lambda error JSON that the workflow's Fail states carry as Cause, read back into a message. */
export function causeMessage(outcome: Pick<RunOutcome, 'error' | 'cause'>): string {
  if (!outcome.cause) return outcome.error ?? 'unknown error';
  try {
    const parsed = JSON.parse(outcome.cause) as { errorMessage?: string };
    return parsed.errorMessage ?? outcome.cause;
  } catch {
    return outcome.cause;
  }
}
