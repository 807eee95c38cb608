import { unmarshall } from '@aws-sdk/util-dynamodb';
import { KEY_ATTRIBUTES } from './table-design';

/** DynamoDB's own signal that a condition did not hold; matched by name so that any SDK copy's class is recognised. */
function isConditionalCheckFailed(err: unknown): boolean {
  return err instanceof Error && err.name === 'ConditionalCheckFailedException';
}

/** What conditionalWrite returns when the condition did not hold and no typed error was asked for. */
export const CONDITION_FAILED: unique symbol = Symbol('condition failed');

/**
 * The one mapping of a single-item conditional write's outcome: its result; or, when the condition
 * did not hold, the typed error `failed` makes (StaleWriteError, SessionNotFoundError, ...), or
 * CONDITION_FAILED without one (an idempotent create, a release of someone else's lock, a read
 * to find out why). Any other error passes unchanged.
 */
export async function conditionalWrite<T>(write: Promise<T>): Promise<T | typeof CONDITION_FAILED>;
export async function conditionalWrite<T>(write: Promise<T>, failed: (cause: unknown) => Error): Promise<T>;
export async function conditionalWrite<T>(write: Promise<T>, failed?: (cause: unknown) => Error): Promise<T | typeof CONDITION_FAILED> {
  try {
    return await write;
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
    if (failed) throw failed(err);
    return CONDITION_FAILED;
  }
}

/** Spread into a conditional write whose failure must say why: DynamoDB then returns the item as the condition saw it. */
export const ITEM_ON_FAILURE = { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } as const;

/** A conditional write's outcome: its result, or the item its failed condition saw (undefined: there was none). */
export type WriteOutcome<T> = { written: T } | { failed: Record<string, unknown> | undefined };

/**
 * A conditional write sent with ITEM_ON_FAILURE, so that a failed condition says why in the same call,
 * with no read after it: the item comes with ConditionalCheckFailedException (`Item`, as AttributeValues:
 * the DocumentClient translates results, not errors; Powertools' idempotency layer reads it the same way).
 * DynamoDB sends no `Item` when there was no item. Any other error passes unchanged.
 */
export async function conditionalWriteOrItem<T>(write: Promise<T>): Promise<WriteOutcome<T>> {
  try {
    return { written: await write };
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
    const item = (err as { Item?: Parameters<typeof unmarshall>[0] }).Item;
    return { failed: item ? unmarshall(item) : undefined };
  }
}

/** The stored item without its key attributes: callers see domain objects, never the table layout. */
export function withoutKeys<T>(item: Record<string, unknown>): T {
  const copy: Record<string, unknown> = { ...item };
  for (const key of KEY_ATTRIBUTES) delete copy[key];
  return copy as T;
}

/**
 * A deep copy without `undefined` values (optional fields left unset). Marshalling rejects them unless the
 * injected client was built with `removeUndefinedValues`, and the store must not depend on how it was built.
 */
export function withoutUndefined<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => withoutUndefined(v)) as T;
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = withoutUndefined(v);
  return out as T;
}
