import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from './batch';
import type { DocWriteRequest } from './batch';
import { PLAN_CHUNK_SIZE, planChunkKey } from './table-design';

/**
 * The plan snapshot is stored as chunks of PLAN_CHUNK_SIZE names in plan order, never in the session item:
 * a 10,000-node plan would make every session read and write heavy, while a step needs only its own slice.
 */
export function planChunkWrites(upgradeId: string, plan: readonly string[], wlmNames?: readonly string[]): DocWriteRequest[] {
  const writes: DocWriteRequest[] = [];
  for (let chunk = 0; chunk * PLAN_CHUNK_SIZE < plan.length; chunk++) {
    const nodes = plan.slice(chunk * PLAN_CHUNK_SIZE, (chunk + 1) * PLAN_CHUNK_SIZE);
    // The workload manager's names beside the inventory's, position for position (a CSM site's nids), when they differ.
    const wlmNodes = wlmNames?.slice(chunk * PLAN_CHUNK_SIZE, (chunk + 1) * PLAN_CHUNK_SIZE);
    writes.push({ PutRequest: { Item: { ...planChunkKey(upgradeId, chunk), chunk, nodes, ...(wlmNodes ? { wlmNodes } : {}) } } });
  }
  return writes;
}

/** Deletes of the chunks a plan of `oldLength` names had beyond those of a plan of `newLength`. */
export function surplusPlanChunkDeletes(upgradeId: string, oldLength: number, newLength: number): DocWriteRequest[] {
  const deletes: DocWriteRequest[] = [];
  for (let chunk = chunkCount(newLength); chunk < chunkCount(oldLength); chunk++) deletes.push({ DeleteRequest: { Key: planChunkKey(upgradeId, chunk) } });
  return deletes;
}

const chunkCount = (length: number): number => Math.ceil(length / PLAN_CHUNK_SIZE);

/** Names at plan positions [start, end), like Array.prototype.slice: positions past the plan's end are simply absent. */
export async function readPlanSlice(
  client: DynamoDBDocumentClient,
  tableName: string,
  upgradeId: string,
  start: number,
  end: number,
  field: 'nodes' | 'wlmNodes' = 'nodes',
): Promise<string[]> {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0) {
    throw new RangeError(`invalid plan slice [${start}, ${end}) of session ${upgradeId}`);
  }
  if (end <= start) return [];
  const first = Math.floor(start / PLAN_CHUNK_SIZE);
  const last = Math.floor((end - 1) / PLAN_CHUNK_SIZE);
  const byChunk = new Map<number, string[]>();
  if (first === last) {
    // The common case (a step inside one chunk): a GetItem is cheaper than a BatchGetItem.
    const out = await client.send(new GetCommand({ TableName: tableName, Key: planChunkKey(upgradeId, first), ConsistentRead: true }));
    if (out.Item) byChunk.set(first, (out.Item[field] as string[] | undefined) ?? []);
  } else {
    const keys = Array.from({ length: last - first + 1 }, (_, i) => planChunkKey(upgradeId, first + i));
    for (const item of await batchGetAll(client, tableName, keys)) byChunk.set(item.chunk as number, (item[field] as string[] | undefined) ?? []);
  }
  const names: string[] = [];
  // Stop at the first missing chunk: it is the end of the plan (or no plan at all).
  for (let chunk = first; chunk <= last && byChunk.has(chunk); chunk++) names.push(...byChunk.get(chunk)!);
  const offset = first * PLAN_CHUNK_SIZE;
  return names.slice(start - offset, end - offset);
}
