import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateTableCommand, DescribeTableCommand, PutItemCommand, GetItemCommand, type DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactGetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { createTableInput, SESSIONS_BY_CREATION_INDEX } from '../../adapters/dynamodb/table-design';
import { connectDynamoDb, startLocalDynamoDb, type LocalDynamoDb } from '../../local/local-dynamodb';
import { canonicalNumber, compareStrings } from '../../local/dynamodb-store/attribute-values';

/**
 * The embedded DynamoDB (local/dynamodb-store) against what the DynamoDB API reference documents,
 * each case through both paths a caller has: the in-process clients of the process that owns the
 * store, and the real SDK over the wire (another process's view, e.g. `rollout serve`'s endpoint).
 * Both must give the same answers and the same errors.
 */
let db: LocalDynamoDb;
let wire: LocalDynamoDb;
const T = 'cases';

beforeAll(async () => {
  db = await startLocalDynamoDb();
  wire = connectDynamoDb({ endpoint: db.endpoint, tableName: db.tableName });
  await db.rawClient.send(
    new CreateTableCommand({
      TableName: T,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'g', AttributeType: 'S' },
        { AttributeName: 'n', AttributeType: 'N' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'byG',
          KeySchema: [
            { AttributeName: 'g', KeyType: 'HASH' },
            { AttributeName: 'n', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
});
afterAll(async () => {
  await wire.close();
  await db.close();
});

const paths: [string, () => DynamoDBDocumentClient][] = [
  ['in-process', () => db.client],
  ['over the wire', () => wire.client],
];

async function failure(promise: Promise<unknown>): Promise<{ name: string; message: string; Item?: unknown; CancellationReasons?: unknown }> {
  try {
    await promise;
  } catch (err) {
    const e = err as DynamoDBServiceException & { Item?: unknown; CancellationReasons?: unknown };
    return {
      name: e.name,
      message: e.message,
      ...(e.Item ? { Item: e.Item } : {}),
      ...(e.CancellationReasons ? { CancellationReasons: e.CancellationReasons } : {}),
    };
  }
  throw new Error('expected a failure');
}

describe.each(paths)('the embedded DynamoDB, %s', (path, clientOf) => {
  const pk = `P-${path}`;
  let c: DynamoDBDocumentClient;
  beforeAll(() => {
    c = clientOf();
  });

  it('puts and gets items with every type, numbers canonical, binaries as bytes', async () => {
    const item = {
      pk,
      sk: 'types',
      s: 'text',
      num: 1.5,
      big: 12345678901234,
      t: true,
      nul: null,
      list: [1, 'a', { m: false }],
      mp: { nested: { deep: 'x' } },
      strings: new Set(['a', 'b']),
      numbers: new Set([1, 2]),
      bin: new Uint8Array([1, 2, 3]),
    };
    await c.send(new PutCommand({ TableName: T, Item: item }));
    const { Item } = await c.send(new GetCommand({ TableName: T, Key: { pk, sk: 'types' } }));
    expect(Item).toEqual({ ...item, bin: new Uint8Array([1, 2, 3]) });
    const projected = await c.send(
      new GetCommand({
        TableName: T,
        Key: { pk, sk: 'types' },
        ProjectionExpression: 'mp.nested.deep, #list[2].m, #s',
        ExpressionAttributeNames: { '#s': 's', '#list': 'list' },
      }),
    );
    expect(projected.Item).toEqual({ mp: { nested: { deep: 'x' } }, list: [{ m: false }], s: 'text' });
  });

  it('applies a conditional write atomically: of 50 concurrent lock takers exactly one wins', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        c.send(
          new UpdateCommand({
            TableName: T,
            Key: { pk, sk: 'lock' },
            UpdateExpression: 'SET #owner = :owner ADD #token :one',
            ConditionExpression: 'attribute_not_exists(#owner)',
            ExpressionAttributeNames: { '#owner': 'owner', '#token': 'token' },
            ExpressionAttributeValues: { ':owner': `o${i}`, ':one': 1 },
          }),
        ),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(new Set(rejected.map((r) => (r.reason as Error).name))).toEqual(new Set(['ConditionalCheckFailedException']));
    expect(rejected[0]!.reason).toMatchObject({ message: 'The conditional request failed', $fault: 'client', $metadata: { httpStatusCode: 400 } });
    expect((await c.send(new GetCommand({ TableName: T, Key: { pk, sk: 'lock' } }))).Item).toMatchObject({ token: 1 });
  });

  it('returns the item with a failed condition when ReturnValuesOnConditionCheckFailure asks', async () => {
    await c.send(new PutCommand({ TableName: T, Item: { pk, sk: 'held', owner: 'someone' } }));
    const err = await failure(
      c.send(
        new PutCommand({
          TableName: T,
          Item: { pk, sk: 'held', owner: 'me' },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    expect(err).toEqual({
      name: 'ConditionalCheckFailedException',
      message: 'The conditional request failed',
      Item: { pk: { S: pk }, sk: { S: 'held' }, owner: { S: 'someone' } },
    });
  });

  it('returns the item as the failed condition saw it from UpdateItem and DeleteItem, and none when there was no item', async () => {
    await c.send(new PutCommand({ TableName: T, Item: { pk, sk: 'old', state: 'READY', n: 3 } }));
    const update = await failure(
      c.send(
        new UpdateCommand({
          TableName: T,
          Key: { pk, sk: 'old' },
          UpdateExpression: 'SET #state = :to',
          ConditionExpression: '#state = :from',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':to': 'STOPPING', ':from': 'UPDATING' },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    expect(update.Item).toEqual({ pk: { S: pk }, sk: { S: 'old' }, state: { S: 'READY' }, n: { N: '3' } });
    const del = await failure(
      c.send(
        new DeleteCommand({
          TableName: T,
          Key: { pk, sk: 'old' },
          ConditionExpression: 'n > :n',
          ExpressionAttributeValues: { ':n': 5 },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    expect(del.Item).toEqual({ pk: { S: pk }, sk: { S: 'old' }, state: { S: 'READY' }, n: { N: '3' } });
    // Without the option, the item is not returned; with it and no item, neither (DynamoDB sends no Item).
    const asked = await failure(
      c.send(new DeleteCommand({ TableName: T, Key: { pk, sk: 'old' }, ConditionExpression: 'n > :n', ExpressionAttributeValues: { ':n': 5 } })),
    );
    expect(asked).toEqual({ name: 'ConditionalCheckFailedException', message: 'The conditional request failed' });
    const none = await failure(
      c.send(
        new UpdateCommand({
          TableName: T,
          Key: { pk, sk: 'never' },
          UpdateExpression: 'SET n = :n',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':n': 1 },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    expect(none).toEqual({ name: 'ConditionalCheckFailedException', message: 'The conditional request failed' });
    expect((await c.send(new GetCommand({ TableName: T, Key: { pk, sk: 'old' } }))).Item).toEqual({ pk, sk: 'old', state: 'READY', n: 3 });
  });

  it('refuses an unknown ReturnValuesOnConditionCheckFailure even when the condition holds', async () => {
    const refused = await failure(c.send(new PutCommand({ TableName: T, Item: { pk, sk: 'rv' }, ReturnValuesOnConditionCheckFailure: 'ALL_NEW' as never })));
    expect(refused.name).toBe('ValidationException');
    expect(refused.message).toContain('ReturnValuesOnConditionCheckFailure');
    expect((await c.send(new GetCommand({ TableName: T, Key: { pk, sk: 'rv' } }))).Item).toBeUndefined();
  });

  it('transactions: a cancellation reason carries the item its failed condition saw when the action asks', async () => {
    await c.send(new PutCommand({ TableName: T, Item: { pk, sk: 'tx-held', owner: 'someone' } }));
    const canceled = await failure(
      c.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: T,
                Item: { pk, sk: 'tx-new' },
                ConditionExpression: 'attribute_not_exists(pk)',
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
            {
              Update: {
                TableName: T,
                Key: { pk, sk: 'tx-held' },
                UpdateExpression: 'SET #owner = :me',
                ConditionExpression: 'attribute_not_exists(#owner)',
                ExpressionAttributeNames: { '#owner': 'owner' },
                ExpressionAttributeValues: { ':me': 'me' },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
            {
              ConditionCheck: {
                TableName: T,
                Key: { pk, sk: 'tx-absent' },
                ConditionExpression: 'attribute_exists(pk)',
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
          ],
        }),
      ),
    );
    expect(canceled.name).toBe('TransactionCanceledException');
    expect(canceled.CancellationReasons).toEqual([
      { Code: 'None' },
      { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', Item: { pk: { S: pk }, sk: { S: 'tx-held' }, owner: { S: 'someone' } } },
      // No item, none returned.
      { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' },
    ]);
    expect((await c.send(new GetCommand({ TableName: T, Key: { pk, sk: 'tx-new' } }))).Item).toBeUndefined();
  });

  it('evaluates conditions as DynamoDB does (comparisons, BETWEEN, IN, functions, absent attributes, NOT/AND/OR)', async () => {
    await c.send(new PutCommand({ TableName: T, Item: { pk, sk: 'cond', a: 5, s: 'hello', l: ['x', 2], set: new Set(['p', 'q']), m: { k: 1 } } }));
    const holds = async (condition: string, values: Record<string, unknown> = {}, names?: Record<string, string>) => {
      try {
        await c.send(
          new UpdateCommand({
            TableName: T,
            Key: { pk, sk: 'cond' },
            UpdateExpression: 'SET touched = :touched',
            ConditionExpression: condition,
            ExpressionAttributeValues: { ':touched': true, ...values },
            ...(names ? { ExpressionAttributeNames: names } : {}),
          }),
        );
        return true;
      } catch (err) {
        if ((err as Error).name === 'ConditionalCheckFailedException') return false;
        throw err;
      }
    };
    expect(await holds('a = :v', { ':v': 5 })).toBe(true);
    expect(await holds('a = :v', { ':v': '5' })).toBe(false); // another type is never equal
    expect(await holds('a <> :v', { ':v': '5' })).toBe(true);
    expect(await holds('absent <> :v', { ':v': 1 })).toBe(true);
    expect(await holds('absent = :v', { ':v': 1 })).toBe(false);
    expect(await holds('a < :v', { ':v': 10 })).toBe(true);
    expect(await holds('a < :v', { ':v': 5.0001 })).toBe(true);
    expect(await holds('a >= :v', { ':v': 6 })).toBe(false);
    expect(await holds('s > :v', { ':v': 'help' })).toBe(false);
    expect(await holds('a BETWEEN :lo AND :hi', { ':lo': 1, ':hi': 5 })).toBe(true);
    expect(await holds('a IN (:x, :y)', { ':x': 4, ':y': 5 })).toBe(true);
    expect(await holds('begins_with(s, :p)', { ':p': 'he' })).toBe(true);
    expect(await holds('contains(s, :p)', { ':p': 'll' })).toBe(true);
    expect(await holds('contains(#set, :p)', { ':p': 'q' }, { '#set': 'set' })).toBe(true);
    expect(await holds('contains(l, :p)', { ':p': 2 })).toBe(true);
    expect(await holds('size(s) = :n', { ':n': 5 })).toBe(true);
    expect(await holds('size(l) > :n', { ':n': 1 })).toBe(true);
    expect(await holds('attribute_type(m, :t)', { ':t': 'M' })).toBe(true);
    expect(await holds('m.k = :v', { ':v': 1 })).toBe(true);
    expect(await holds('l[1] = :v', { ':v': 2 })).toBe(true);
    expect(await holds('attribute_exists(absent) OR a = :v', { ':v': 5 })).toBe(true);
    expect(await holds('NOT a = :v AND a = :v', { ':v': 5 })).toBe(false);
    expect(await holds('NOT (a = :v AND a = :w)', { ':v': 5, ':w': 6 })).toBe(true);
  });

  it('applies update expressions: SET with arithmetic, if_not_exists and list_append, REMOVE, ADD and DELETE on sets', async () => {
    await c.send(
      new PutCommand({ TableName: T, Item: { pk, sk: 'upd', n: 10, l: [1, 2, 3], q: ['a', 'b'], s: new Set(['a', 'b', 'c']), m: { x: 1 }, gone: 'bye' } }),
    );
    const out = await c.send(
      new UpdateCommand({
        TableName: T,
        Key: { pk, sk: 'upd' },
        UpdateExpression:
          'SET n = n + :one, fresh = if_not_exists(fresh, :zero), l = list_append(l, :more), m.y = :two REMOVE gone, q[0] ADD hitcount :one, s :add DELETE tags :none',
        ExpressionAttributeValues: { ':one': 1, ':zero': 0, ':more': [4], ':two': 2, ':add': new Set(['d']), ':none': new Set(['z']) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    expect(out.Attributes).toEqual({
      pk,
      sk: 'upd',
      n: 11,
      fresh: 0,
      l: [1, 2, 3, 4],
      q: ['b'],
      m: { x: 1, y: 2 },
      hitcount: 1,
      s: new Set(['a', 'b', 'c', 'd']),
    });
    const removed = await c.send(
      new UpdateCommand({
        TableName: T,
        Key: { pk, sk: 'upd' },
        UpdateExpression: 'REMOVE l[0], l[2] DELETE s :ab',
        ExpressionAttributeValues: { ':ab': new Set(['a', 'b']) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    // Both indices name elements of the list as it was.
    expect(removed.Attributes).toMatchObject({ l: [2, 4], s: new Set(['c', 'd']) });
    const old = await c.send(
      new UpdateCommand({
        TableName: T,
        Key: { pk, sk: 'upd' },
        UpdateExpression: 'SET n = :v',
        ExpressionAttributeValues: { ':v': 0.1 },
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    expect(old.Attributes).toEqual({ n: 11 });
    // An update of an item that does not exist creates it from its key.
    const created = await c.send(
      new UpdateCommand({
        TableName: T,
        Key: { pk, sk: 'new' },
        UpdateExpression: 'ADD hits :one',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    expect(created.Attributes).toEqual({ pk, sk: 'new', hits: 1 });
  });

  it('refuses what DynamoDB refuses, with its error names and messages', async () => {
    const validation = (message: string | RegExp) => ({
      name: 'ValidationException',
      message: typeof message === 'string' ? message : (expect.stringMatching(message) as unknown),
    });
    expect(await failure(c.send(new GetCommand({ TableName: T, Key: { pk } })))).toEqual(validation('The provided key element does not match the schema'));
    expect(await failure(c.send(new GetCommand({ TableName: 'nope', Key: { pk, sk: 'x' } })))).toEqual({
      name: 'ResourceNotFoundException',
      message: 'Requested resource not found',
    });
    expect(await failure(c.send(new PutCommand({ TableName: T, Item: { sk: 'x' } })))).toEqual(
      validation('One or more parameter values were invalid: Missing the key pk in the item'),
    );
    expect(await failure(c.send(new PutCommand({ TableName: T, Item: { pk: '', sk: 'x' } })))).toEqual(
      validation(/cannot contain an empty string value. Key: pk/),
    );
    expect(await failure(c.send(new PutCommand({ TableName: T, Item: { pk: 'x'.repeat(2049), sk: 'x' } })))).toEqual(
      validation('One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes'),
    );
    expect(await failure(c.send(new PutCommand({ TableName: T, Item: { pk, sk: 'big', data: 'x'.repeat(410 * 1024) } })))).toEqual(
      validation('Item size has exceeded the maximum allowed size'),
    );
    expect(
      await failure(
        c.send(new UpdateCommand({ TableName: T, Key: { pk, sk: 'x' }, UpdateExpression: 'SET status = :s', ExpressionAttributeValues: { ':s': 'a' } })),
      ),
    ).toEqual(validation('Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: status'));
    expect(
      await failure(
        c.send(new UpdateCommand({ TableName: T, Key: { pk, sk: 'x' }, UpdateExpression: 'SET a = :a', ExpressionAttributeValues: { ':a': 1, ':b': 2 } })),
      ),
    ).toEqual(validation('Value provided in ExpressionAttributeValues unused in expressions: keys: {:b}'));
    expect(await failure(c.send(new UpdateCommand({ TableName: T, Key: { pk, sk: 'x' }, UpdateExpression: 'SET a = :absent' })))).toEqual(
      validation('Invalid UpdateExpression: An expression attribute value used in expression is not defined; attribute value: :absent'),
    );
    expect(
      await failure(
        c.send(new UpdateCommand({ TableName: T, Key: { pk, sk: 'x' }, UpdateExpression: 'SET a = :a, a.b = :a', ExpressionAttributeValues: { ':a': 1 } })),
      ),
    ).toEqual(
      validation(
        'Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, b]',
      ),
    );
    expect(
      await failure(
        c.send(new UpdateCommand({ TableName: T, Key: { pk, sk: 'x' }, UpdateExpression: 'SET sk = :a', ExpressionAttributeValues: { ':a': 'y' } })),
      ),
    ).toEqual(validation('One or more parameter values were invalid: Cannot update attribute sk. This attribute is part of the key'));
    expect(
      await failure(
        c.send(
          new UpdateCommand({
            TableName: T,
            Key: { pk, sk: 'x' },
            UpdateExpression: 'SET a = :a',
            ConditionExpression: 'a = = :a',
            ExpressionAttributeValues: { ':a': 1 },
          }),
        ),
      ),
    ).toEqual(validation(/^Invalid ConditionExpression: Syntax error; token: "="/));
    expect(await failure(c.send(new PutCommand({ TableName: T, Item: { pk, sk: 'gsi', g: 'x', n: 'not a number' } })))).toEqual(
      validation('One or more parameter values were invalid: Type mismatch for Index Key n Expected: N Actual: S IndexName: byG'),
    );
  });

  it('queries a key range in order, pages with Limit and LastEvaluatedKey, filters after reading, counts', async () => {
    const qpk = `${pk}-query`;
    await c.send(
      new BatchWriteCommand({
        RequestItems: {
          [T]: Array.from({ length: 20 }, (_, i) => ({ PutRequest: { Item: { pk: qpk, sk: `N#${String(i).padStart(2, '0')}`, even: i % 2 === 0 } } })),
        },
      }),
    );
    await c.send(new PutCommand({ TableName: T, Item: { pk: qpk, sk: 'O#other' } }));
    const query = (extra: Record<string, unknown>) =>
      c.send(
        new QueryCommand({
          TableName: T,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
          ExpressionAttributeValues: { ':pk': qpk, ':p': 'N#' },
          ...extra,
        }),
      );
    const all = await query({});
    expect(all.Items!.map((i) => i.sk)).toEqual(Array.from({ length: 20 }, (_, i) => `N#${String(i).padStart(2, '0')}`));
    const first = await query({ Limit: 7, ScanIndexForward: false });
    expect(first.Items!.map((i) => i.sk)).toEqual(['N#19', 'N#18', 'N#17', 'N#16', 'N#15', 'N#14', 'N#13']);
    expect(first.LastEvaluatedKey).toEqual({ pk: qpk, sk: 'N#13' });
    const second = await query({ Limit: 7, ScanIndexForward: false, ExclusiveStartKey: first.LastEvaluatedKey });
    expect(second.Items![0]!.sk).toBe('N#12');
    // Limit counts items read, before the filter.
    const filtered = await c.send(
      new QueryCommand({
        TableName: T,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :a AND :b',
        FilterExpression: 'even = :t',
        ExpressionAttributeValues: { ':pk': qpk, ':a': 'N#05', ':b': 'N#10', ':t': true },
      }),
    );
    expect(filtered.Items!.map((i) => i.sk)).toEqual(['N#06', 'N#08', 'N#10']);
    expect([filtered.Count, filtered.ScannedCount]).toEqual([3, 6]);
    const counted = await c.send(
      new QueryCommand({
        TableName: T,
        KeyConditionExpression: 'pk = :pk AND sk > :a',
        ExpressionAttributeValues: { ':pk': qpk, ':a': 'N#17' },
        Select: 'COUNT',
      }),
    );
    expect(counted).toMatchObject({ Count: 3, ScannedCount: 3 });
    expect(counted.Items).toBeUndefined();
  });

  it('stops a page at 1 MB read and goes on from its LastEvaluatedKey', async () => {
    const mpk = `${pk}-mb`;
    const items = Array.from({ length: 30 }, (_, i) => ({ pk: mpk, sk: `x${String(i).padStart(2, '0')}`, data: 'y'.repeat(100 * 1024) }));
    for (let i = 0; i < items.length; i += 5)
      await c.send(new BatchWriteCommand({ RequestItems: { [T]: items.slice(i, i + 5).map((Item) => ({ PutRequest: { Item } })) } }));
    const pages: number[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await c.send(
        new QueryCommand({ TableName: T, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': mpk }, ExclusiveStartKey: start }),
      );
      pages.push(page.Items!.length);
      start = page.LastEvaluatedKey;
    } while (start);
    expect(pages.length).toBeGreaterThan(2);
    expect(pages.reduce((a, b) => a + b, 0)).toBe(30);
  });

  it('keeps a sparse global secondary index in step with puts, updates and deletes', async () => {
    const g = `G-${path}`;
    await c.send(new PutCommand({ TableName: T, Item: { pk, sk: 'g1', g, n: 3 } }));
    await c.send(new PutCommand({ TableName: T, Item: { pk, sk: 'g2', g, n: 1 } }));
    await c.send(new PutCommand({ TableName: T, Item: { pk, sk: 'g3', g, n: 2 } }));
    await c.send(new PutCommand({ TableName: T, Item: { pk, sk: 'g4' } }));
    const list = async () =>
      (await c.send(new QueryCommand({ TableName: T, IndexName: 'byG', KeyConditionExpression: 'g = :g', ExpressionAttributeValues: { ':g': g } }))).Items!.map(
        (i) => i.sk,
      );
    expect(await list()).toEqual(['g2', 'g3', 'g1']);
    await c.send(new UpdateCommand({ TableName: T, Key: { pk, sk: 'g2' }, UpdateExpression: 'SET n = :n', ExpressionAttributeValues: { ':n': 10 } }));
    await c.send(new UpdateCommand({ TableName: T, Key: { pk, sk: 'g3' }, UpdateExpression: 'REMOVE g' }));
    await c.send(new DeleteCommand({ TableName: T, Key: { pk, sk: 'g1' } }));
    expect(await list()).toEqual(['g2']);
    const page = await c.send(
      new QueryCommand({ TableName: T, IndexName: 'byG', KeyConditionExpression: 'g = :g', ExpressionAttributeValues: { ':g': g }, Limit: 1 }),
    );
    expect(page.LastEvaluatedKey).toEqual({ pk, sk: 'g2', g, n: 10 });
    expect(
      await failure(
        c.send(
          new QueryCommand({ TableName: T, IndexName: 'byG', KeyConditionExpression: 'g = :g', ExpressionAttributeValues: { ':g': g }, ConsistentRead: true }),
        ),
      ),
    ).toEqual({
      name: 'ValidationException',
      message: 'Consistent reads are not supported on global secondary indexes',
    });
  });

  it('batches: BatchGet reads what exists, refuses duplicate keys; BatchWrite writes all or nothing', async () => {
    await c.send(new BatchWriteCommand({ RequestItems: { [T]: [{ PutRequest: { Item: { pk, sk: 'b1' } } }, { PutRequest: { Item: { pk, sk: 'b2' } } }] } }));
    const got = await c.send(
      new BatchGetCommand({
        RequestItems: {
          [T]: {
            Keys: [
              { pk, sk: 'b1' },
              { pk, sk: 'b2' },
              { pk, sk: 'b9' },
            ],
          },
        },
      }),
    );
    expect(got.Responses![T]!.map((i) => i.sk).sort()).toEqual(['b1', 'b2']);
    expect(got.UnprocessedKeys).toEqual({});
    expect(
      await failure(
        c.send(
          new BatchGetCommand({
            RequestItems: {
              [T]: {
                Keys: [
                  { pk, sk: 'b1' },
                  { pk, sk: 'b1' },
                ],
              },
            },
          }),
        ),
      ),
    ).toEqual({ name: 'ValidationException', message: 'Provided list of item keys contains duplicates' });
    const refused = await failure(
      c.send(new BatchWriteCommand({ RequestItems: { [T]: [{ PutRequest: { Item: { pk, sk: 'b3' } } }, { PutRequest: { Item: { sk: 'no pk' } } }] } })),
    );
    expect(refused.name).toBe('ValidationException');
    expect((await c.send(new GetCommand({ TableName: T, Key: { pk, sk: 'b3' } }))).Item).toBeUndefined();
  });

  it('transactions: every condition holds and all is written, or nothing is, with the reasons', async () => {
    await c.send(new PutCommand({ TableName: T, Item: { pk, sk: 't1', v: 1 } }));
    await c.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: T,
              Key: { pk, sk: 't1' },
              UpdateExpression: 'SET v = v + :one',
              ConditionExpression: 'v = :one',
              ExpressionAttributeValues: { ':one': 1 },
            },
          },
          { Put: { TableName: T, Item: { pk, sk: 't2', v: 1 }, ConditionExpression: 'attribute_not_exists(pk)' } },
        ],
      }),
    );
    const err = await failure(
      c.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: T, Item: { pk, sk: 't3' } } },
            { ConditionCheck: { TableName: T, Key: { pk, sk: 't2' }, ConditionExpression: 'v = :nine', ExpressionAttributeValues: { ':nine': 9 } } },
          ],
        }),
      ),
    );
    expect(err).toMatchObject({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }] });
    const read = await c.send(
      new TransactGetCommand({ TransactItems: [{ Get: { TableName: T, Key: { pk, sk: 't1' } } }, { Get: { TableName: T, Key: { pk, sk: 't3' } } }] }),
    );
    expect(read.Responses).toEqual([{ Item: { pk, sk: 't1', v: 2 } }, {}]);
  });

  it('scans every partition in pages, and in segments', async () => {
    const seen = new Set<string>();
    let start: Record<string, unknown> | undefined;
    do {
      const page = await c.send(new ScanCommand({ TableName: T, Limit: 13, ExclusiveStartKey: start, ProjectionExpression: 'pk, sk' }));
      for (const i of page.Items!) seen.add(`${i.pk as string}/${i.sk as string}`);
      start = page.LastEvaluatedKey;
    } while (start);
    const countSegment = async (Segment: number) => {
      let count = 0;
      let from: Record<string, unknown> | undefined;
      do {
        const page = await c.send(new ScanCommand({ TableName: T, Segment, TotalSegments: 3, Select: 'COUNT', ExclusiveStartKey: from }));
        count += page.Count!;
        from = page.LastEvaluatedKey;
      } while (from);
      return count;
    };
    const counts = await Promise.all([0, 1, 2].map(countSegment));
    expect(counts.filter((n) => n > 0).length).toBeGreaterThan(1);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(seen.size);
  });
});

describe('the store, whichever client wrote', () => {
  it('shows one client’s writes to the other at once, and answers DescribeTable as DynamoDB does', async () => {
    await db.client.send(new PutCommand({ TableName: T, Item: { pk: 'shared', sk: 'x', v: 1 } }));
    expect((await wire.client.send(new GetCommand({ TableName: T, Key: { pk: 'shared', sk: 'x' } }))).Item).toEqual({ pk: 'shared', sk: 'x', v: 1 });
    const { Table } = await wire.rawClient.send(new DescribeTableCommand({ TableName: T }));
    expect(Table).toMatchObject({
      TableName: T,
      TableStatus: 'ACTIVE',
      TableArn: `arn:aws:dynamodb:local:000000000000:table/${T}`,
      GlobalSecondaryIndexes: [{ IndexName: 'byG', IndexStatus: 'ACTIVE' }],
    });
    expect(Table!.ItemCount).toBeGreaterThan(0);
  });

  it('low-level commands: AttributeValues in and out, a copy the caller may change', async () => {
    for (const client of [db.rawClient, wire.rawClient] as DynamoDBClient[]) {
      await client.send(new PutItemCommand({ TableName: T, Item: { pk: { S: 'low' }, sk: { S: 'x' }, n: { N: '007.50' }, b: { B: new Uint8Array([9]) } } }));
      const first = await client.send(new GetItemCommand({ TableName: T, Key: { pk: { S: 'low' }, sk: { S: 'x' } } }));
      expect(first.Item).toEqual({ pk: { S: 'low' }, sk: { S: 'x' }, n: { N: '7.5' }, b: { B: new Uint8Array([9]) } });
      (first.Item!.n as { N: string }).N = '99';
      const again = await client.send(new GetItemCommand({ TableName: T, Key: { pk: { S: 'low' }, sk: { S: 'x' } } }));
      expect(again.Item!.n).toEqual({ N: '7.5' });
    }
  });

  it('refuses an operation it does not implement by name', async () => {
    const res = await fetch(db.endpoint, {
      method: 'POST',
      headers: { 'x-amz-target': 'DynamoDB_20120810.ExecuteStatement', 'content-type': 'application/x-amz-json-1.0' },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      __type: 'com.amazon.coral.service#UnknownOperationException',
      message: 'The embedded DynamoDB does not implement ExecuteStatement',
    });
  });
});

describe('numbers and strings', () => {
  it('keeps numbers canonical and within DynamoDB’s range', () => {
    expect(['1.50', '1E+3', '-0', '0.000100', '00012', '-1.0e-2'].map(canonicalNumber)).toEqual(['1.5', '1000', '0', '0.0001', '12', '-0.01']);
    expect(() => canonicalNumber('1'.repeat(39))).toThrow('Attempting to store more than 38 significant digits in a Number');
    expect(() => canonicalNumber('1e126')).toThrow(/Number overflow/);
    expect(() => canonicalNumber('abc')).toThrow('The parameter cannot be converted to a numeric value: abc');
  });

  it('orders strings by UTF-8 bytes (code points), not UTF-16 units', () => {
    // U+FF61 is one UTF-16 unit above a surrogate pair's first unit, but below the code point U+1F600.
    expect(compareStrings('\uff61', '\u{1f600}')).toBeLessThan(0);
    expect('\uff61' < '\u{1f600}').toBe(false);
    expect(compareStrings('a', 'b')).toBeLessThan(0);
  });
});

describe('a data directory', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rollout-store-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('keeps every write once answered, through a close and a reopen', async () => {
    const dir = join(root, 'kept');
    const first = await startLocalDynamoDb({ dataDir: dir });
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => first.client.send(new PutCommand({ TableName: first.tableName, Item: { pk: `P${i % 7}`, sk: `S${i}`, i } }))),
    );
    await first.client.send(new DeleteCommand({ TableName: first.tableName, Key: { pk: 'P0', sk: 'S0' } }));
    await first.client.send(
      new UpdateCommand({
        TableName: first.tableName,
        Key: { pk: 'P1', sk: 'S1' },
        UpdateExpression: 'SET i = i + :d',
        ExpressionAttributeValues: { ':d': 1000 },
      }),
    );
    await first.close();
    const second = await startLocalDynamoDb({ dataDir: dir });
    try {
      const all = await second.client.send(new ScanCommand({ TableName: second.tableName }));
      expect(all.Count).toBe(199);
      expect((await second.client.send(new GetCommand({ TableName: second.tableName, Key: { pk: 'P1', sk: 'S1' } }))).Item).toEqual({
        pk: 'P1',
        sk: 'S1',
        i: 1001,
      });
    } finally {
      await second.close();
    }
  });

  it('converts a directory the previous store (dynalite) wrote, keeping its table, items and index', async () => {
    const dir = join(root, 'legacy');
    const legacy = new Level<string, unknown>(dir, { valueEncoding: 'json' });
    const session = {
      pk: { S: 'SESSION#s-1' },
      sk: { S: 'SESSION' },
      gsi1pk: { S: 'SESSIONS' },
      gsi1sk: { S: '2026-01-01T00:00:00.000Z#s-1' },
      upgradeId: { S: 's-1' },
    };
    await legacy.batch([
      { type: 'put', key: 'table~rollout', value: { ...createTableInput('rollout'), TableStatus: 'ACTIVE', CreationDateTime: 1_700_000_000 } },
      { type: 'put', key: 'item-rollout~a9c1ee/53455353494f4e/53455353494f4e/', value: session },
      {
        type: 'put',
        key: 'item-rollout~547807/4c4f434b/4c4f434b/',
        value: { pk: { S: 'LOCK#n1' }, sk: { S: 'LOCK' }, owner: { S: 's-1' }, fencingToken: { N: '3' } },
      },
      { type: 'put', key: 'index-global~rollout~sessionsByCreation~6a788c/5345/', value: session },
    ]);
    await legacy.close();
    for (let open = 0; open < 2; open++) {
      const db = await startLocalDynamoDb({ dataDir: dir });
      try {
        const listed = await db.client.send(
          new QueryCommand({
            TableName: db.tableName,
            IndexName: SESSIONS_BY_CREATION_INDEX,
            KeyConditionExpression: 'gsi1pk = :p',
            ExpressionAttributeValues: { ':p': 'SESSIONS' },
          }),
        );
        expect(listed.Items).toEqual([{ pk: 'SESSION#s-1', sk: 'SESSION', gsi1pk: 'SESSIONS', gsi1sk: '2026-01-01T00:00:00.000Z#s-1', upgradeId: 's-1' }]);
        expect((await db.client.send(new GetCommand({ TableName: db.tableName, Key: { pk: 'LOCK#n1', sk: 'LOCK' } }))).Item).toEqual({
          pk: 'LOCK#n1',
          sk: 'LOCK',
          owner: 's-1',
          fencingToken: 3,
        });
      } finally {
        await db.close();
      }
    }
    // Nothing of the old layout is left.
    const after = new Level<string, unknown>(dir, { valueEncoding: 'json' });
    const keys: string[] = [];
    for await (const key of after.keys()) keys.push(key);
    await after.close();
    expect(keys.filter((k) => !k.startsWith('rs~'))).toEqual([]);
  });
});
