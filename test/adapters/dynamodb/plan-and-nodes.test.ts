import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbSessionStore } from '../../../adapters/dynamodb/dynamodb-session-store';
import { KEY_ATTRIBUTES, PLAN_CHUNK_SIZE, sessionPk } from '../../../adapters/dynamodb/table-design';
import type { NodeRecord } from '../../../core/rolling-upgrade/session';
import { stepCount, stepRange } from '../../../core/rolling-upgrade/step-plan';
import { countRequests, startLocalDynamoDb } from '../../../local/local-dynamodb';
import type { LocalDynamoDb, RequestCounter } from '../../../local/local-dynamodb';
import { makePlan, makeSession } from '../../support/dynamodb';

let db: LocalDynamoDb;
let store: DynamoDbSessionStore;
let requests: RequestCounter;

beforeAll(async () => {
  db = await startLocalDynamoDb();
  store = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client });
  requests = countRequests(db.rawClient);
});
afterAll(() => db.close());

describe('plan snapshot', () => {
  const plan = makePlan(2500);
  const upgradeId = 'plan-2500';

  beforeAll(() => store.createSession(makeSession({ upgradeId, nodeCount: plan.length, upgradeStepSize: 7 }), plan));

  it(`is stored as chunks of ${PLAN_CHUNK_SIZE} names, not in the session item`, async () => {
    const out = await db.client.send(
      new QueryCommand({
        TableName: db.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': sessionPk(upgradeId), ':p': 'PLAN#' },
      }),
    );
    expect(out.Items?.map((i) => (i.nodes as string[]).length)).toEqual([1000, 1000, 500]);
    expect(await store.getSession(upgradeId)).not.toHaveProperty('plan');
  });

  it.each([
    [0, 1000],
    [990, 1010],
    [999, 1001],
    [1000, 2000],
    [1999, 2001],
    [5, 2499],
    [2400, 2500],
    [0, 2500],
  ])('returns the slice [%i, %i) across chunk boundaries', async (start, end) => {
    expect(await store.getPlanSlice(upgradeId, start, end)).toEqual(plan.slice(start, end));
  });

  it('reads the plan back, step by step, in plan order including the last partial step', async () => {
    const steps = stepCount(plan.length, 7);
    const slices = await Promise.all(
      Array.from({ length: steps }, (_, step) => {
        const { start, end } = stepRange(step, 7, plan.length);
        return store.getPlanSlice(upgradeId, start, end);
      }),
    );
    expect(slices.at(-1)).toHaveLength(plan.length % 7 || 7);
    expect(slices.flat()).toEqual(plan);
  });

  it('reads a step inside one chunk with a single request', async () => {
    const before = requests.byCommand();
    await store.getPlanSlice(upgradeId, 1200, 1300);
    const after = requests.byCommand();
    expect((after.GetItemCommand ?? 0) - (before.GetItemCommand ?? 0)).toBe(1);
    expect(after.BatchGetItemCommand ?? 0).toBe(before.BatchGetItemCommand ?? 0);
  });

  it('behaves like Array.slice past the end, on empty ranges and for unknown sessions', async () => {
    expect(await store.getPlanSlice(upgradeId, 2495, 2600)).toEqual(plan.slice(2495));
    expect(await store.getPlanSlice(upgradeId, 3000, 3100)).toEqual([]);
    expect(await store.getPlanSlice(upgradeId, 10, 10)).toEqual([]);
    expect(await store.getPlanSlice('no-plan', 0, 10)).toEqual([]);
  });

  it('rejects negative or fractional positions', async () => {
    await expect(store.getPlanSlice(upgradeId, -1, 5)).rejects.toBeInstanceOf(RangeError);
    await expect(store.getPlanSlice(upgradeId, 0.5, 5)).rejects.toBeInstanceOf(RangeError);
  });
});

describe('node records', () => {
  const names = makePlan(250, 'nd');
  const all = names.map((name, index) => ({ name, index }));

  it('defaults nodes never written to NOT_STARTED, keeping the input order across batches of 100', async () => {
    const upgradeId = 'nodes-defaults';
    const written: NodeRecord[] = [
      { name: names[3]!, index: 3, status: 'IN_PROGRESS', phase: 'DRAINING' },
      { name: names[180]!, index: 180, status: 'FAILED', phase: 'BOOTING', reason: 'upgrading-time-out-booting' },
    ];
    await store.putNodes(upgradeId, written);
    const shuffled = [...all].reverse();
    const records = await store.getNodes(upgradeId, shuffled);
    expect(records.map((r) => r.name)).toEqual(shuffled.map((n) => n.name));
    expect(records.find((r) => r.name === names[3])).toEqual(written[0]);
    expect(records.find((r) => r.name === names[180])).toEqual(written[1]);
    const defaults = records.filter((r) => r.name !== names[3] && r.name !== names[180]);
    expect(defaults).toHaveLength(248);
    for (const r of defaults) expect(r).toEqual({ name: r.name, index: names.indexOf(r.name), status: 'NOT_STARTED' });
  });

  it('answers a node asked twice twice', async () => {
    const records = await store.getNodes('nodes-dup', [all[1]!, all[1]!, all[2]!]);
    expect(records.map((r) => r.name)).toEqual([names[1], names[1], names[2]]);
  });

  it('puts many records (past 25 per batch) and lists them in plan order, without key attributes', async () => {
    const upgradeId = 'nodes-many';
    const records: NodeRecord[] = all.map(({ name, index }) => ({ name, index, status: 'UPGRADED', phase: 'DONE', reason: undefined }));
    await store.putNodes(upgradeId, records);
    const listed = await store.listNodes(upgradeId);
    expect(listed).toEqual(records.map(({ reason: _r, ...rest }) => rest));
    for (const r of listed) for (const key of KEY_ATTRIBUTES) expect(r).not.toHaveProperty(key);
    expect(await store.listNodes('nodes-none')).toEqual([]);
  });

  it('keeps the last record when one call names a node twice, and overwrites earlier calls', async () => {
    const upgradeId = 'nodes-overwrite';
    await store.putNodes(upgradeId, [{ name: 'a', index: 0, status: 'IN_PROGRESS', phase: 'LOCKED' }]);
    await store.putNodes(upgradeId, [
      { name: 'a', index: 0, status: 'IN_PROGRESS', phase: 'BOOTING' },
      { name: 'a', index: 0, status: 'UPGRADED', phase: 'DONE' },
    ]);
    expect(await store.listNodes(upgradeId)).toEqual([{ name: 'a', index: 0, status: 'UPGRADED', phase: 'DONE' }]);
  });

  it('keeps sessions apart', async () => {
    await store.putNodes('nodes-a', [{ name: 'shared', index: 0, status: 'FAILED' }]);
    const [fromB] = await store.getNodes('nodes-b', [{ name: 'shared', index: 4 }]);
    expect(fromB).toEqual({ name: 'shared', index: 4, status: 'NOT_STARTED' });
  });
});
