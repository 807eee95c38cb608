import { DynamoDbSessionStore } from '../../../adapters/dynamodb/dynamodb-session-store';
import { countRequests, startLocalDynamoDb } from '../../../local/local-dynamodb';
import type { LocalDynamoDb, RequestCounter } from '../../../local/local-dynamodb';
import { makeSession } from '../../support/dynamodb';

let db: LocalDynamoDb;
let store: DynamoDbSessionStore;
let requests: RequestCounter;

beforeAll(async () => {
  db = await startLocalDynamoDb();
  store = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client });
  requests = countRequests(db.rawClient);
});
afterAll(() => db.close());

describe('messages', () => {
  it('lists 1,200 messages oldest first, across Query pages, apart from the session item', async () => {
    const session = makeSession();
    await store.createSession(session, []);
    // ~1 KB each: 1,200 of them pass the 1 MB Query page, so the listing must follow LastEvaluatedKey.
    const texts = Array.from({ length: 1200 }, (_, i) => `message ${i} `.padEnd(1000, '.'));
    for (const text of texts) await store.messages.append(session.upgradeId, text);

    const queriesBefore = requests.byCommand().QueryCommand ?? 0;
    expect(await store.messages.list(session.upgradeId)).toEqual(texts);
    expect((requests.byCommand().QueryCommand ?? 0) - queriesBefore).toBeGreaterThan(1);
    expect(await store.getSession(session.upgradeId)).toEqual(session);
  });

  it('keeps one writer’s order even when the clock does not move (simulated time, same millisecond)', async () => {
    const frozen = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client, clock: { now: () => 1_700_000_000_000 } });
    const texts = Array.from({ length: 50 }, (_, i) => `frozen ${i}`);
    for (const text of texts) await frozen.messages.append('frozen-clock', text);
    expect(await store.messages.list('frozen-clock')).toEqual(texts);
  });

  it('keeps a session’s order across processes whose clock restarts earlier (a crash, then a resume)', async () => {
    const first = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client, clock: { now: () => 1_700_000_500_000 } });
    await first.messages.append('resumed', 'before the crash 1');
    await first.messages.append('resumed', 'before the crash 2');
    // The new process's simulated clock starts again at an earlier date.
    let now = 1_700_000_000_000;
    const second = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client, clock: { now: () => now++ } });
    for (let i = 1; i <= 3; i++) await second.messages.append('resumed', `after the resume ${i}`);
    expect(await store.messages.list('resumed')).toEqual([
      'before the crash 1',
      'before the crash 2',
      'after the resume 1',
      'after the resume 2',
      'after the resume 3',
    ]);
  });

  it('reads the newest message alone (what a progress display shows), and none before the first', async () => {
    expect(await store.messages.latest('no-messages-yet')).toBeUndefined();
    expect(await store.messages.latest('resumed')).toBe('after the resume 3');
  });

  it('loses none of many concurrent messages, and keeps sessions apart', async () => {
    const texts = Array.from({ length: 100 }, (_, i) => `concurrent ${i}`);
    await Promise.all([...texts.map((t) => store.messages.append('concurrent-a', t)), store.messages.append('concurrent-b', 'other')]);
    expect([...(await store.messages.list('concurrent-a'))].sort()).toEqual([...texts].sort());
    expect(await store.messages.list('concurrent-b')).toEqual(['other']);
    expect(await store.messages.list('no-messages')).toEqual([]);
  });
});
