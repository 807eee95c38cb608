import { innermostExecutionError } from '../core/execution-error';
import type { RunOutcome } from './runtime';

/** The Lambda error JSON that the workflow's Fail states carry as Cause, read back into a message. */
export function causeMessage(outcome: Pick<RunOutcome, 'error' | 'cause'>): string {
  return innermostExecutionError({ Error: outcome.error, Cause: outcome.cause }).message;
}
