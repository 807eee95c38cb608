import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { batchGetAll } from './batch';
import { CONDITION_FAILED, conditionalWrite } from './items';
import { LockContentionError } from '../errors';
import { lockKey } from './table-design';

/** Lock writes in flight per call: one conditional write per node, so a 1,000-node step must not go one by one. */
const LOCK_CONCURRENCY = 16;
/** A lock that vanishes between our failed put and the read of its holder is retried; twice more is plenty. */
const MAX_LOCK_ATTEMPTS = 3;

/**
 * Per-node locks shared by every session: one item per node, taken with a conditional Put.
 * Single-item conditional writes only, because dynalite (the local engine) has no transactions.
 */
export class DynamoDbNodeLocks {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => number,
  ) {}

  /** Nodes held by someone else, with their owner. */
  async tryLock(owner: string, nodes: readonly string[]): Promise<Map<string, string>> {
    const limit = pLimit(LOCK_CONCURRENCY);
    const heldByOthers = new Map<string, string>();
    await Promise.all(
      [...new Set(nodes)].map((node) =>
        limit(async () => {
          const holder = await this.lockOne(owner, node);
          if (holder !== undefined) heldByOthers.set(node, holder);
        }),
      ),
    );
    return heldByOthers;
  }

  /** Undefined once `owner` holds the lock, else the holder's name. */
  private async lockOne(owner: string, node: string): Promise<string | undefined> {
    for (let attempt = 0; attempt < MAX_LOCK_ATTEMPTS; attempt++) {
      const taken = await conditionalWrite(
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...lockKey(node), owner, acquiredAt: new Date(this.now()).toISOString() },
            // Re-acquiring one's own lock succeeds: a retried handler must not lock itself out.
            ConditionExpression: 'attribute_not_exists(pk) OR #owner = :owner',
            ExpressionAttributeNames: { '#owner': 'owner' },
            ExpressionAttributeValues: { ':owner': owner },
          }),
        ),
      );
      if (taken !== CONDITION_FAILED) return undefined;
      // ReturnValuesOnConditionCheckFailure would save this read, but dynalite ignores it.
      const holder = await this.ownerOf(node);
      if (holder === owner) return undefined; // released and re-taken by another call of the same owner meanwhile
      if (holder !== undefined) return holder;
    }
    throw new LockContentionError(node);
  }

  private async ownerOf(node: string): Promise<string | undefined> {
    const out = await this.client.send(new GetCommand({ TableName: this.tableName, Key: lockKey(node), ConsistentRead: true }));
    return out.Item?.owner as string | undefined;
  }

  async release(owner: string, nodes: readonly string[]): Promise<void> {
    const limit = pLimit(LOCK_CONCURRENCY);
    await Promise.all(
      [...new Set(nodes)].map((node) =>
        limit(async () => {
          // Not ours (or already gone): leaving it is exactly what release means.
          await conditionalWrite(
            this.client.send(
              new DeleteCommand({
                TableName: this.tableName,
                Key: lockKey(node),
                ConditionExpression: '#owner = :owner',
                ExpressionAttributeNames: { '#owner': 'owner' },
                ExpressionAttributeValues: { ':owner': owner },
              }),
            ),
          );
        }),
      ),
    );
  }

  async owners(nodes: readonly string[]): Promise<Map<string, string>> {
    const nodeByPk = new Map(nodes.map((node) => [lockKey(node).pk, node]));
    const items = await batchGetAll(this.client, this.tableName, nodes.map(lockKey));
    return new Map(items.map((item) => [nodeByPk.get(item.pk as string)!, item.owner as string]));
  }
}
