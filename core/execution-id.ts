import { createHash } from 'node:crypto';

/**
 * A UUID derived from a Step Functions execution id. A retried first task of an execution finds
 * the session or deployment it already created instead of making a second one.
 */
export function idForExecution(executionId: string): string {
  const hex = createHash('sha256').update(executionId).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The longest id any session, deployment or task run may have: ours are 36-character UUIDs, and a
 * longer one cannot name anything. Checked before any lookup (DynamoDB refuses a key over 2,048 bytes
 * with an error that is not "not found"), and named in the refusal.
 */
export const MAX_SESSION_ID_LENGTH = 200;

/** Whether `id` can name a session at all (not empty, at most MAX_SESSION_ID_LENGTH characters). */
export function isPossibleSessionId(id: string): boolean {
  return id.length > 0 && id.length <= MAX_SESSION_ID_LENGTH;
}

/** An id quoted for a message: whole when it could be one, else its start, its length and the limit. */
export function quotedSessionId(id: string): string {
  if (id.length <= MAX_SESSION_ID_LENGTH) return `'${id}'`;
  return `'${id.slice(0, 24)}...' (${id.length} characters; ids are at most ${MAX_SESSION_ID_LENGTH})`;
}
