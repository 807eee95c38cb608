import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbSessionStore } from '../../../adapters/dynamodb/dynamodb-session-store';
import { SESSIONS_BY_CREATION_INDEX } from '../../../adapters/dynamodb/table-design';
import { connectDynamoDb, countRequests, startLocalDynamoDb } from '../../../local/local-dynamodb';
import type { LocalDynamoDb } from '../../../local/local-dynamodb';
import { makePlan, makeSession } from '../../support/dynamodb';

let db: LocalDynamoDb;
let dataRoot: string;

beforeAll(async () => {
  db = await startLocalDynamoDb();
  dataRoot = await mkdtemp(join(tmpdir(), 'rollout-dynalite-'));
});
afterAll(async () => {
  await db.close();
  await rm(dataRoot, { recursive: true, force: true });
});

describe('startLocalDynamoDb', () => {
  it('serves the rollout table, ACTIVE, with the sessions index, on a loopback endpoint', async () => {
    expect(db.tableName).toBe('rollout');
    expect(db.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const { Table } = await db.rawClient.send(new DescribeTableCommand({ TableName: db.tableName }));
    expect(Table?.TableStatus).toBe('ACTIVE');
    expect(Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName)).toEqual([SESSIONS_BY_CREATION_INDEX]);
  });

  it('keeps sessions in a data directory across close and reopen (creating the directory)', async () => {
    const dataDir = join(dataRoot, 'nested', 'db');
    const session = makeSession();
    const plan = makePlan(1234);

    const first = await startLocalDynamoDb({ dataDir, tableName: 'persisted' });
    const firstStore = new DynamoDbSessionStore({ tableName: first.tableName, client: first.client });
    await firstStore.createSession(session, plan);
    await firstStore.messages.append(session.upgradeId, 'before restart');
    await firstStore.locks.tryLockNodes(session.upgradeId, [plan[0]!]);
    await first.close();

    // The table already exists on disk: starting again must not fail on it.
    const second = await startLocalDynamoDb({ dataDir, tableName: 'persisted' });
    try {
      const secondStore = new DynamoDbSessionStore({ tableName: second.tableName, client: second.client });
      expect(await secondStore.getSession(session.upgradeId)).toEqual(session);
      expect(await secondStore.getPlanSlice(session.upgradeId, 995, 1005)).toEqual(plan.slice(995, 1005));
      expect(await secondStore.messages.list(session.upgradeId)).toEqual(['before restart']);
      expect(await secondStore.locks.getLockOwners([plan[0]!])).toEqual(new Map([[plan[0]!, session.upgradeId]]));
    } finally {
      await second.close();
    }
  });

  it('keeps nothing without a data directory', async () => {
    const session = makeSession();
    const first = await startLocalDynamoDb();
    await new DynamoDbSessionStore({ tableName: first.tableName, client: first.client }).createSession(session, []);
    await first.close();
    const second = await startLocalDynamoDb();
    try {
      expect(await new DynamoDbSessionStore({ tableName: second.tableName, client: second.client }).getSession(session.upgradeId)).toBeUndefined();
    } finally {
      await second.close();
    }
  });
});

describe('connectDynamoDb', () => {
  it('reaches another instance’s dynalite through its endpoint', async () => {
    const other = connectDynamoDb({ endpoint: db.endpoint, tableName: db.tableName });
    try {
      const session = makeSession();
      await new DynamoDbSessionStore({ tableName: db.tableName, client: db.client }).createSession(session, ['n1']);
      const otherStore = new DynamoDbSessionStore({ tableName: other.tableName, client: other.client });
      expect(await otherStore.getSession(session.upgradeId)).toEqual(session);
      // Locks taken through one connection are seen through the other.
      await otherStore.locks.tryLockNodes('other-process', ['shared-node']);
      expect(await new DynamoDbSessionStore({ tableName: db.tableName, client: db.client }).locks.tryLockNodes('me', ['shared-node'])).toEqual(
        new Map([['shared-node', 'other-process']]),
      );
    } finally {
      await other.close();
    }
  });
});

describe('countRequests', () => {
  it('counts each command sent through the client or its DocumentClient, by low-level command name', async () => {
    const conn = connectDynamoDb({ endpoint: db.endpoint, tableName: db.tableName });
    try {
      const counter = countRequests(conn.rawClient);
      const store = new DynamoDbSessionStore({ tableName: conn.tableName, client: conn.client });
      const session = makeSession();
      // An existence check, one BatchWriteItem for 3 chunks, the session Put.
      await store.createSession(session, makePlan(2100));
      expect(counter.byCommand()).toEqual({ GetItemCommand: 1, BatchWriteItemCommand: 1, PutItemCommand: 1 });
      await store.getSession(session.upgradeId);
      await store.getPlanSlice(session.upgradeId, 900, 1100);
      await conn.rawClient.send(new DescribeTableCommand({ TableName: conn.tableName }));
      expect(counter.byCommand()).toEqual({ GetItemCommand: 2, BatchWriteItemCommand: 1, PutItemCommand: 1, BatchGetItemCommand: 1, DescribeTableCommand: 1 });
      expect(counter.total).toBe(6);

      // A second counter on the same client starts at zero and does not disturb the first.
      const later = countRequests(conn.rawClient);
      await store.getSession(session.upgradeId);
      expect(later.total).toBe(1);
      expect(counter.total).toBe(7);
    } finally {
      await conn.close();
    }
  });

  it.each([
    ['the in-process clients', () => ({ ...db, close: async () => {} })],
    ['clients over the wire', () => connectDynamoDb({ endpoint: db.endpoint, tableName: db.tableName })],
  ])('counts the request units DynamoDB bills, per item and per KB, through %s', async (_label, connect) => {
    const conn = connect();
    try {
      const counter = countRequests(conn.rawClient);
      const TableName = conn.tableName;
      const key = (sk: string) => ({ pk: `UNITS#${_label}`, sk });
      // 3,000 bytes: three write units, one read unit (half when eventually consistent).
      const put = await conn.client.send(new PutCommand({ TableName, Item: { ...key('big'), body: 'x'.repeat(3000) } }));
      expect(put).not.toHaveProperty('ConsumedCapacity');
      expect([counter.writeUnits, counter.readUnits]).toEqual([3, 0]);
      // An update is billed on the larger of the item before and after it.
      await conn.client.send(new UpdateCommand({ TableName, Key: key('big'), UpdateExpression: 'SET body = :b', ExpressionAttributeValues: { ':b': 'y' } }));
      expect(counter.writeUnits).toBe(6);
      await conn.client.send(new GetCommand({ TableName, Key: key('big'), ConsistentRead: true }));
      await conn.client.send(new GetCommand({ TableName, Key: key('big') }));
      expect(counter.readUnits).toBe(1.5);
      // A batch bills every item it writes; a transaction twice each.
      await conn.client.send(new BatchWriteCommand({ RequestItems: { [TableName]: ['a', 'b', 'c'].map((sk) => ({ PutRequest: { Item: key(sk) } })) } }));
      expect(counter.writeUnits).toBe(9);
      await conn.client.send(new TransactWriteCommand({ TransactItems: ['d', 'e'].map((sk) => ({ Put: { TableName, Item: key(sk) } })) }));
      expect(counter.writeUnits).toBe(13);
      // A refused conditional write is billed too.
      await expect(conn.client.send(new PutCommand({ TableName, Item: key('a'), ConditionExpression: 'attribute_not_exists(pk)' }))).rejects.toThrow();
      expect(counter.writeUnits).toBe(14);
      // Asked by the caller, ConsumedCapacity is the caller's.
      const asked = await conn.client.send(new GetCommand({ TableName, Key: key('a'), ConsistentRead: true, ReturnConsumedCapacity: 'TOTAL' }));
      expect(asked.ConsumedCapacity?.CapacityUnits).toBe(1);
      expect(counter.total).toBe(8);
    } finally {
      await conn.close();
    }
  });

  it('does not count requests of other clients', async () => {
    const conn = connectDynamoDb({ endpoint: db.endpoint, tableName: db.tableName });
    try {
      const counter = countRequests(conn.rawClient);
      await new DynamoDbSessionStore({ tableName: db.tableName, client: db.client }).getSession('x');
      expect(counter.total).toBe(0);
    } finally {
      await conn.close();
    }
  });
});
