import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { MAX_BATCH_ATTEMPTS, batchGetAll, batchWriteAll } from '../../../adapters/dynamodb/batch';
import { UnprocessedBatchError } from '../../../adapters/errors';
import type { DocWriteRequest } from '../../../adapters/dynamodb/batch';
import { DynamoDbNodeLocks } from '../../../adapters/dynamodb/node-locks';

/*
 * The embedded DynamoDB never throttles, so it never returns unprocessed items and its locks never vanish mid-call.
 * These paths are driven here by a scripted client instead.
 */

type Send = (command: unknown) => Promise<unknown>;
const clientOf = (send: Send) => ({ send: jest.fn(send) }) as unknown as DynamoDBDocumentClient & { send: jest.Mock };

const conditionFailed = () => Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' });
const puts = (n: number): DocWriteRequest[] => Array.from({ length: n }, (_, i) => ({ PutRequest: { Item: { pk: `p${i}`, sk: 's' } } }));

describe('batchWriteAll', () => {
  it('sends 25 per request and resends the unprocessed items until none is left', async () => {
    const sent: number[] = [];
    let throttled = 2;
    const client = clientOf(async (command) => {
      const items = (command as BatchWriteCommand).input.RequestItems!.t!;
      sent.push(items.length);
      // Throttle the first two requests halfway.
      if (throttled-- > 0) return { UnprocessedItems: { t: items.slice(items.length / 2) } };
      return { UnprocessedItems: {} };
    });
    await batchWriteAll(client, 't', puts(50));
    expect(sent.slice(0, 2)).toEqual([25, 25]);
    expect(sent.slice(2).sort()).toEqual([13, 13]);
  });

  it('gives up loudly after the last attempt instead of dropping writes', async () => {
    const client = clientOf(async (command) => ({ UnprocessedItems: (command as BatchWriteCommand).input.RequestItems }));
    jest.useFakeTimers(); // the backoff between the attempts adds up to seconds
    try {
      const failure = batchWriteAll(client, 't', puts(3));
      const checked = expect(failure).rejects.toMatchObject({ name: 'UnprocessedBatchError', remaining: 3 });
      await jest.runAllTimersAsync();
      await checked;
      await expect(failure).rejects.toBeInstanceOf(UnprocessedBatchError);
    } finally {
      jest.useRealTimers();
    }
    expect(client.send).toHaveBeenCalledTimes(MAX_BATCH_ATTEMPTS);
  });

  it('lets AWS errors through unchanged', async () => {
    const throttling = Object.assign(new Error('Rate exceeded'), { name: 'ProvisionedThroughputExceededException' });
    const client = clientOf(async () => Promise.reject(throttling));
    await expect(batchWriteAll(client, 't', puts(1))).rejects.toBe(throttling);
  });
});

describe('batchGetAll', () => {
  it('reads consistently, 100 keys per request, collapses duplicates and retries unprocessed keys', async () => {
    const requested: number[] = [];
    let throttledOnce = false;
    const client = clientOf(async (command) => {
      const { Keys, ConsistentRead } = (command as BatchGetCommand).input.RequestItems!.t!;
      expect(ConsistentRead).toBe(true);
      requested.push(Keys!.length);
      if (!throttledOnce) {
        throttledOnce = true;
        return { Responses: { t: Keys!.slice(0, 10) }, UnprocessedKeys: { t: { Keys: Keys!.slice(10) } } };
      }
      return { Responses: { t: Keys } };
    });
    const keys = Array.from({ length: 150 }, (_, i) => ({ pk: `p${i % 120}`, sk: 's' }));
    const items = await batchGetAll(client, 't', keys);
    expect(requested.slice(0, 2).sort()).toEqual([100, 20]);
    expect(requested).toHaveLength(3);
    expect(items.map((i) => i.pk).sort()).toEqual(Array.from({ length: 120 }, (_, i) => `p${i}`).sort());
  });
});

describe('node lock held by another: the failed write names its holder', () => {
  it('reads nothing after a failure that carries the item, as DynamoDB sends it when asked', async () => {
    const client = clientOf(async (command) => {
      if (command instanceof UpdateCommand) {
        expect(command.input.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
        throw Object.assign(conditionFailed(), { Item: { owner: { S: 'holder' }, leaseExpiresAt: { N: '1000' }, fencingToken: { N: '3' } } });
      }
      throw new Error('unexpected command');
    });
    expect(await new DynamoDbNodeLocks({ client, tableName: 't', clock: { now: () => 0 } }).tryLockNodes('me', ['n1'], 60)).toEqual(
      new Map([['n1', 'holder']]),
    );
    expect(client.send).toHaveBeenCalledTimes(1);
  });
});

describe('node lock whose holder changes between two attempts', () => {
  const heldBy = (owner: string, leaseExpiresAt: number) =>
    Object.assign(conditionFailed(), { Item: { owner: { S: owner }, leaseExpiresAt: { N: String(leaseExpiresAt) }, fencingToken: { N: '1' } } });

  it('tries again when the holder the failure names has no live lease by now, and takes it', async () => {
    let puts = 0;
    let now = 0;
    const client = clientOf(async (command) => {
      if (!(command instanceof UpdateCommand)) throw new Error('unexpected command');
      if (puts++ > 0) return {};
      now = 10; // the holder's lease (5) ran out meanwhile
      throw heldBy('old', 5);
    });
    const held = await new DynamoDbNodeLocks({ client, tableName: 't', clock: { now: () => now } }).tryLockNodes('me', ['n1'], 60);
    expect(held.size).toBe(0);
    expect(puts).toBe(2);
  });

  it('reports the holder the next failure names', async () => {
    let puts = 0;
    let now = 0;
    const client = clientOf(async (command) => {
      if (!(command instanceof UpdateCommand)) throw new Error('unexpected command');
      if (puts++ === 0) {
        now = 10;
        throw heldBy('old', 5);
      }
      throw heldBy('late-comer', 1000);
    });
    expect(await new DynamoDbNodeLocks({ client, tableName: 't', clock: { now: () => now } }).tryLockNodes('me', ['n1'], 60)).toEqual(
      new Map([['n1', 'late-comer']]),
    );
  });

  it('fails with LockContentionError if it keeps changing hands', async () => {
    // Each failure names a holder whose lease has just run out: each attempt is refused by the next taker.
    const client = clientOf(async (command) => {
      if (command instanceof UpdateCommand) throw heldBy('someone', 0);
      return {};
    });
    await expect(new DynamoDbNodeLocks({ client, tableName: 't', clock: { now: () => 0 } }).tryLockNodes('me', ['n1'], 60)).rejects.toMatchObject({
      name: 'LockContentionError',
      node: 'n1',
    });
  });
});
