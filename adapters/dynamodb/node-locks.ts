import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import type { Clock } from '../../core/clock';
import type { NodeLock, NodeLockStore } from '../../ports/node-locks';
import { batchGetAll } from './batch';
import { ITEM_ON_FAILURE, conditionalWrite, conditionalWriteOrItem } from './items';
import { LockContentionError } from '../errors';
import { deploymentKey, environmentUpgradeKey, lockKey, sessionKey, taskRunKey, type ItemKey } from './table-design';

/**
 * A lock's default lease: several times the longest wait between two increments of a session
 * (a poll backoff capped at 300 s, plus a Lambda running at most 15 min), so that only a dead
 * session loses its nodes.
 */
export const DEFAULT_LOCK_LEASE_SECONDS = 3600;

/** Lock writes in flight per call: one conditional write per node, so a 1,000-node step must not go one by one. */
const LOCK_CONCURRENCY = 16;
/** A lock whose lease ran out between our failed write and now is tried again; twice more is plenty. */
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

export interface DynamoDbNodeLocksOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Lease ends are on this clock: the simulated one on the embedded default. */
  clock: Clock;
  /** Lease of a node lock when the caller names none. Default DEFAULT_LOCK_LEASE_SECONDS. */
  lockLeaseSeconds?: number;
}

/**
 * Per-node leased locks shared by every workflow, in the manner of the DynamoDB lock client: one
 * item per node with its owner, the end of its lease and a fencing token bumped on every
 * acquisition. Single-item conditional writes only (a transaction holds at most 100 items and costs two write units per item).
 */
export class DynamoDbNodeLocks implements NodeLockStore {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly leaseSeconds: number;
  private readonly clock: Clock;

  constructor(options: DynamoDbNodeLocksOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.clock = options.clock;
    this.leaseSeconds = options.lockLeaseSeconds ?? DEFAULT_LOCK_LEASE_SECONDS;
  }

  /** Nodes held by someone else (under a live lease), with their owner. */
  async tryLockNodes(owner: string, nodes: readonly string[], leaseSeconds = this.leaseSeconds): Promise<Map<string, string>> {
    const heldByOthers = new Map<string, string>();
    await forEach(nodes, async (node) => {
      const holder = await this.lockOne(owner, node, leaseSeconds * 1000);
      if (holder !== undefined) heldByOthers.set(node, holder);
    });
    return heldByOthers;
  }

  /**
   * The heartbeat, and the check before acting: extends the lease of each lock `owner` holds with
   * the given fencing token. Returns the locks lost (taken over, or released), with their current
   * holder if any. A lease that ran out but that nobody took is still ours (as in the lock client).
   */
  async renewNodeLocks(owner: string, held: ReadonlyMap<string, number>, leaseSeconds = this.leaseSeconds): Promise<Map<string, NodeLock | undefined>> {
    const lost = new Map<string, NodeLock | undefined>();
    await forEach([...held.keys()], async (node) => {
      const renewed = await conditionalWriteOrItem(
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: lockKey(node),
            UpdateExpression: 'SET #lease = :expires',
            ConditionExpression: '#owner = :owner AND #token = :token',
            ExpressionAttributeNames: { '#owner': NAMES['#owner'], '#lease': NAMES['#lease'], '#token': NAMES['#token'] },
            ExpressionAttributeValues: { ':owner': owner, ':token': held.get(node)!, ':expires': this.clock.now() + leaseSeconds * 1000 },
            // The lock as the failed condition saw it is the one that replaced ours (none: no lock item at all).
            ...ITEM_ON_FAILURE,
          }),
        ),
      );
      if ('failed' in renewed) lost.set(node, asLock(renewed.failed));
    });
    return lost;
  }

  async releaseNodeLocks(owner: string, nodes: readonly string[]): Promise<void> {
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

  async getLockOwners(nodes: readonly string[]): Promise<Map<string, string>> {
    const locks = await this.getNodeLocks(nodes);
    return new Map([...locks].map(([node, lock]) => [node, lock.owner]));
  }

  /** Every held lock among these nodes, its lease running or not. */
  async getNodeLocks(nodes: readonly string[]): Promise<Map<string, NodeLock>> {
    const nodeByPk = new Map(nodes.map((node) => [lockKey(node).pk, node]));
    const items = await batchGetAll(this.client, this.tableName, nodes.map(lockKey));
    const held = new Map<string, NodeLock>();
    for (const item of items) {
      const lock = asLock(item);
      if (lock) held.set(nodeByPk.get(item.pk as string)!, lock);
    }
    return held;
  }

  async knownRuns(ids: readonly string[]): Promise<Set<string>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Set();
    // The record of every kind of run, by the id: one BatchGetItem of keys only.
    const keysOf = (id: string): ItemKey[] => [sessionKey(id), deploymentKey(id), taskRunKey(id), environmentUpgradeKey(id)];
    const idOfPk = new Map(unique.flatMap((id) => keysOf(id).map((key) => [key.pk, id] as const)));
    const items = await batchGetAll(this.client, this.tableName, unique.flatMap(keysOf), { projection: 'pk' });
    return new Set(items.flatMap((item) => (idOfPk.has(item.pk as string) ? [idOfPk.get(item.pk as string)!] : [])));
  }

  /** Undefined once `owner` holds the lock, else the holder's name. */
  private async lockOne(owner: string, node: string, leaseMs: number): Promise<string | undefined> {
    for (let attempt = 0; attempt < MAX_LOCK_ATTEMPTS; attempt++) {
      const now = this.clock.now();
      const taken = await conditionalWriteOrItem(
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
            // The holder comes with the failure: no read after it.
            ...ITEM_ON_FAILURE,
          }),
        ),
      );
      if ('written' in taken) return undefined;
      const holder = asLock(taken.failed);
      if (holder !== undefined && holder.leaseExpiresAt > this.clock.now()) return holder.owner;
    }
    throw new LockContentionError(node);
  }
}

/** One conditional write per distinct node, bounded in flight. */
async function forEach(nodes: readonly string[], write: (node: string) => Promise<void>): Promise<void> {
  const limit = pLimit(LOCK_CONCURRENCY);
  await Promise.all([...new Set(nodes)].map((node) => limit(() => write(node))));
}
