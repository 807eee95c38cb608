import { createHash } from 'node:crypto';

/**
 * A UUID derived from a Step Functions execution id. A retried first task of an execution finds
 * the session or deployment it already created instead of making a second one.
 */
export function idForExecution(executionId: string): string {
  const hex = createHash('sha256').update(executionId).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
