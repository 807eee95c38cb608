import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import type { NodeLock } from '../../ports/session-store';
import { batchGetAll } from './batch';
import { CONDITION_FAILED, conditionalWrite } from './items';
import { LockContentionError } from '../errors';
import { lockKey } from './table-design';

/** Lock writes in flight per call: one conditional write per node, so a 1,000-node step must not go one by one. */
const LOCK_CONCURRENCY = 16;
/** A lock that vanishes between our failed write and the read of its holder is retried; twice more is plenty. */
const MAX_LOCK_ATTEMPTS = 3;

const NAMES = { '#owner': 'owner', '#lease': 'leaseExpiresAt', '#token': 'fencingToken' } as const;

/** A released lock keeps its item (and token) without an owner. */
function asLock(item: Record<string, unknown> | undefined): NodeLock | undefined {
  if (typeof item?.owner !== 'string') return undefined;
  return {
    owner: item.owner as string,
    // Locks written before leases existed never expire and carry token 0.
    leaseExpiresAt: typeof item.leaseExpiresAt === 'number' ? item.leaseExpiresAt : Number.MAX_SAFE_INTEGER,
    fencingToken: typeof item.fencingToken === 'number' ? item.fencingToken : 0,
  };
}

/**
 * Per-node leased locks shared by every session, in the manner of the DynamoDB lock client: one
 * item per node with its owner, the end of its lease and a fencing token bumped on every
 * acquisition. Single-item conditional writes only (a transaction holds at most 100 items and costs two write units per item).
 */
export class DynamoDbNodeLocks {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => number,
  ) {}

  /** Nodes held by someone else (under a live lease), with their owner. */
  async tryLock(owner: string, nodes: readonly string[], leaseMs: number): Promise<Map<string, string>> {
    const heldByOthers = new Map<string, string>();
    await forEach(nodes, async (node) => {
      const holder = await this.lockOne(owner, node, leaseMs);
      if (holder !== undefined) heldByOthers.set(node, holder);
    });
    return heldByOthers;
  }

  /** Undefined once `owner` holds the lock, else the holder's name. */
  private async lockOne(owner: string, node: string, leaseMs: number): Promise<string | undefined> {
    for (let attempt = 0; attempt < MAX_LOCK_ATTEMPTS; attempt++) {
      const now = this.now();
      const taken = await conditionalWrite(
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: lockKey(node),
            // Every acquisition bumps the token, so whoever held it before is fenced off.
            UpdateExpression: 'SET #owner = :owner, #lease = :expires, acquiredAt = :at ADD #token :one',
            // Free, ours already (a retried handler or a resumed session), or its holder's lease ran out (a takeover).
            ConditionExpression: 'attribute_not_exists(#owner) OR #owner = :owner OR #lease <= :now',
            ExpressionAttributeNames: NAMES,
            ExpressionAttributeValues: { ':owner': owner, ':expires': now + leaseMs, ':at': new Date(now).toISOString(), ':one': 1, ':now': now },
          }),
        ),
      );
      if (taken !== CONDITION_FAILED) return undefined;
      // ReturnValuesOnConditionCheckFailure would save this read, but dynalite ignores it.
      const holder = await this.lockOf(node);
      if (holder?.owner === owner) return undefined; // released and re-taken by another call of the same owner meanwhile
      if (holder !== undefined && holder.leaseExpiresAt > this.now()) return holder.owner;
    }
    throw new LockContentionError(node);
  }

  /**
   * The heartbeat, and the check before acting: extends the lease of each lock `owner` holds with
   * the given fencing token. Returns the locks lost (taken over, or released), with their current
   * holder if any. A lease that ran out but that nobody took is still ours (as in the lock client).
   */
  async renew(owner: string, held: ReadonlyMap<string, number>, leaseMs: number): Promise<Map<string, NodeLock | undefined>> {
    const lost = new Map<string, NodeLock | undefined>();
    await forEach([...held.keys()], async (node) => {
      const renewed = await conditionalWrite(
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: lockKey(node),
            UpdateExpression: 'SET #lease = :expires',
            ConditionExpression: '#owner = :owner AND #token = :token',
            ExpressionAttributeNames: { '#owner': NAMES['#owner'], '#lease': NAMES['#lease'], '#token': NAMES['#token'] },
            ExpressionAttributeValues: { ':owner': owner, ':token': held.get(node)!, ':expires': this.now() + leaseMs },
          }),
        ),
      );
      if (renewed === CONDITION_FAILED) lost.set(node, await this.lockOf(node));
    });
    return lost;
  }

  private async lockOf(node: string): Promise<NodeLock | undefined> {
    const out = await this.client.send(new GetCommand({ TableName: this.tableName, Key: lockKey(node), ConsistentRead: true }));
    return asLock(out.Item);
  }

  async release(owner: string, nodes: readonly string[]): Promise<void> {
    await forEach(nodes, async (node) => {
      // Not ours (or already gone): leaving it is exactly what release means. The item stays, without
      // an owner, so that the node's fencing token keeps growing across holders.
      await conditionalWrite(
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: lockKey(node),
            UpdateExpression: 'REMOVE #owner, #lease',
            ConditionExpression: '#owner = :owner',
            ExpressionAttributeNames: { '#owner': 'owner', '#lease': 'leaseExpiresAt' },
            ExpressionAttributeValues: { ':owner': owner },
          }),
        ),
      );
    });
  }

  /** Every held lock among these nodes, its lease running or not. */
  async locks(nodes: readonly string[]): Promise<Map<string, NodeLock>> {
    const nodeByPk = new Map(nodes.map((node) => [lockKey(node).pk, node]));
    const items = await batchGetAll(this.client, this.tableName, nodes.map(lockKey));
    const held = new Map<string, NodeLock>();
    for (const item of items) {
      const lock = asLock(item);
      if (lock) held.set(nodeByPk.get(item.pk as string)!, lock);
    }
    return held;
  }
}

/** One conditional write per distinct node, bounded in flight. */
async function forEach(nodes: readonly string[], write: (node: string) => Promise<void>): Promise<void> {
  const limit = pLimit(LOCK_CONCURRENCY);
  await Promise.all([...new Set(nodes)].map((node) => limit(() => write(node))));
}
