import { BatchGetCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { BatchWriteCommandInput, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { UnprocessedBatchError } from '../errors';
import type { ItemKey } from './table-design';

/** One put or delete of a BatchWriteItem, in DocumentClient (native JS) form. */
export type DocWriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];
type Item = Record<string, unknown>;

/** DynamoDB's per-request ceilings. */
export const BATCH_WRITE_MAX = 25;
export const BATCH_GET_MAX = 100;

/**
 * Unprocessed items are DynamoDB's throttling signal, so each retry waits longer (full jitter, capped);
 * after this many rounds the batch fails loudly instead of silently dropping writes.
 */
export const MAX_BATCH_ATTEMPTS = 10;
const BASE_DELAY_MS = 25;
const MAX_DELAY_MS = 2000;
/** Batches in flight per call: enough to hide latency, few enough not to provoke throttling. */
const BATCH_CONCURRENCY = 4;

const backoff = (attempt: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt)));

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Writes every request, 25 per BatchWriteItem, retrying unprocessed items with backoff. Callers must not repeat a key. */
export async function batchWriteAll(client: DynamoDBDocumentClient, tableName: string, requests: readonly DocWriteRequest[]): Promise<void> {
  const limit = pLimit(BATCH_CONCURRENCY);
  await Promise.all(chunks(requests, BATCH_WRITE_MAX).map((batch) => limit(() => writeOneBatch(client, tableName, batch))));
}

async function writeOneBatch(client: DynamoDBDocumentClient, tableName: string, batch: DocWriteRequest[]): Promise<void> {
  let pending = batch;
  for (let attempt = 0; attempt < MAX_BATCH_ATTEMPTS; attempt++) {
    if (attempt > 0) await backoff(attempt);
    const out = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
    pending = out.UnprocessedItems?.[tableName] ?? [];
    if (pending.length === 0) return;
  }
  throw new UnprocessedBatchError('BatchWriteItem', pending.length, MAX_BATCH_ATTEMPTS);
}

/**
 * Reads the items at these keys (consistently), 100 per BatchGetItem, retrying unprocessed keys with backoff.
 * Duplicate keys are collapsed (DynamoDB rejects them). Missing items are absent; the order is not the input's.
 */
export async function batchGetAll(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly ItemKey[],
  options: { projection?: string } = {},
): Promise<Item[]> {
  const unique: Item[] = [...new Map(keys.map((k) => [`${k.pk}\u0000${k.sk}`, { pk: k.pk, sk: k.sk }])).values()];
  const limit = pLimit(BATCH_CONCURRENCY);
  const results = await Promise.all(chunks(unique, BATCH_GET_MAX).map((batch) => limit(() => getOneBatch(client, tableName, batch, options.projection))));
  return results.flat();
}

async function getOneBatch(client: DynamoDBDocumentClient, tableName: string, batch: Item[], projection: string | undefined): Promise<Item[]> {
  const found: Item[] = [];
  let pending = batch;
  for (let attempt = 0; attempt < MAX_BATCH_ATTEMPTS; attempt++) {
    if (attempt > 0) await backoff(attempt);
    const out = await client.send(
      new BatchGetCommand({
        RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true, ...(projection ? { ProjectionExpression: projection } : {}) } },
      }),
    );
    found.push(...(out.Responses?.[tableName] ?? []));
    pending = out.UnprocessedKeys?.[tableName]?.Keys ?? [];
    if (pending.length === 0) return found;
  }
  throw new UnprocessedBatchError('BatchGetItem', pending.length, MAX_BATCH_ATTEMPTS);
}
