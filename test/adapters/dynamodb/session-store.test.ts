import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbSessionStore } from '../../../adapters/dynamodb/dynamodb-session-store';
import { KEY_ATTRIBUTES, PLAN_CHUNK_SIZE, sessionKey, sessionPk } from '../../../adapters/dynamodb/table-design';
import { SessionNotCancellableError, SessionNotFoundError, StaleWriteError } from '../../../core/errors';
import type { Progress } from '../../../core/rolling-upgrade/session';
import { ensureTable, startLocalDynamoDb } from '../../../local/local-dynamodb';
import type { LocalDynamoDb } from '../../../local/local-dynamodb';
import { makePlan, makeSession } from '../../support/dynamodb';

let db: LocalDynamoDb;
let store: DynamoDbSessionStore;

beforeAll(async () => {
  db = await startLocalDynamoDb();
  store = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client });
});
afterAll(() => db.close());

describe('createSession / getSession', () => {
  it('round-trips every field, without key attributes or undefined optionals', async () => {
    const session = makeSession({ progress: { step: 0, stage: 'STARTING', stageStartedAt: 5, errorCount: 0, bootSessionName: undefined } });
    await store.createSession(session, makePlan(3));
    const read = await store.getSession(session.upgradeId);
    const { bootSessionName: _unset, ...progress } = session.progress;
    expect(read).toEqual({ ...session, progress });
    for (const key of KEY_ATTRIBUTES) expect(read).not.toHaveProperty(key);
  });

  it('is idempotent: creating an existing id again changes neither the session nor its plan', async () => {
    const plan = makePlan(1500);
    const session = makeSession({ nodeCount: plan.length });
    await store.createSession(session, plan);
    await store.createSession({ ...session, state: 'READY', nodeCount: 2 }, makePlan(2, 'other'));
    expect(await store.getSession(session.upgradeId)).toEqual(session);
    expect(await store.getPlanSlice(session.upgradeId, 0, plan.length)).toEqual(plan);
  });

  it('is idempotent under concurrent creates of the same id', async () => {
    const session = makeSession();
    await Promise.all(Array.from({ length: 5 }, () => store.createSession(session, makePlan(10))));
    expect(await store.getSession(session.upgradeId)).toEqual(session);
  });

  it('returns undefined for an unknown id', async () => {
    await expect(store.getSession('never-created')).resolves.toBeUndefined();
  });
});

describe('savePlan', () => {
  it('writes the plan, then sets planTaken, nodeCount and stepCount from the step size', async () => {
    const session = makeSession({ planTaken: false, upgradeStepSize: 300 });
    await store.createSession(session, []);
    const plan = makePlan(2001);
    await store.savePlan(session.upgradeId, plan);
    expect(await store.getSession(session.upgradeId)).toMatchObject({ planTaken: true, nodeCount: 2001, stepCount: Math.ceil(2001 / 300) });
    expect(await store.getPlanSlice(session.upgradeId, 0, 2001)).toEqual(plan);
  });

  it('leaves no chunk of an earlier, longer snapshot behind', async () => {
    const session = makeSession({ planTaken: false });
    await store.createSession(session, []);
    await store.savePlan(session.upgradeId, makePlan(2 * PLAN_CHUNK_SIZE + 5));
    const shorter = makePlan(PLAN_CHUNK_SIZE - 1, 'y');
    await store.savePlan(session.upgradeId, shorter);
    const chunks = await db.client.send(
      new QueryCommand({
        TableName: db.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': sessionPk(session.upgradeId), ':p': 'PLAN#' },
      }),
    );
    expect(chunks.Items).toHaveLength(1);
    expect(await store.getPlanSlice(session.upgradeId, 0, 3 * PLAN_CHUNK_SIZE)).toEqual(shorter);
    expect((await store.getSession(session.upgradeId))?.nodeCount).toBe(shorter.length);
  });

  it('throws SessionNotFoundError for an unknown id', async () => {
    await expect(store.savePlan('never-created', ['a'])).rejects.toBeInstanceOf(SessionNotFoundError);
  });
});

describe('saveProgress', () => {
  it('replaces the progress while it is still at the expected step and stage', async () => {
    const session = makeSession();
    await store.createSession(session, []);
    const next: Progress = { step: 0, stage: 'QUIESCING', stageStartedAt: 10, errorCount: 0, bootSessionName: undefined };
    await store.saveProgress(session.upgradeId, { step: 0, stage: 'STARTING' }, next);
    expect((await store.getSession(session.upgradeId))?.progress).toEqual({ step: 0, stage: 'QUIESCING', stageStartedAt: 10, errorCount: 0 });
  });

  it('throws StaleWriteError when a duplicate invocation already moved it on, and keeps the newer progress', async () => {
    const session = makeSession();
    await store.createSession(session, []);
    const moved: Progress = { step: 0, stage: 'QUIESCING', stageStartedAt: 10, errorCount: 0 };
    await store.saveProgress(session.upgradeId, { step: 0, stage: 'STARTING' }, moved);
    const duplicate = store.saveProgress(session.upgradeId, { step: 0, stage: 'STARTING' }, { ...moved, stageStartedAt: 99 });
    await expect(duplicate).rejects.toBeInstanceOf(StaleWriteError);
    await expect(duplicate).rejects.toMatchObject({ record: `session ${session.upgradeId} progress`, expected: 'step 0 stage STARTING' });
    // Same stage at another step is stale too: both parts of the expectation count.
    await expect(store.saveProgress(session.upgradeId, { step: 1, stage: 'QUIESCING' }, moved)).rejects.toBeInstanceOf(StaleWriteError);
    expect((await store.getSession(session.upgradeId))?.progress).toEqual(moved);
  });

  it('lets exactly one of many racing invocations win', async () => {
    const session = makeSession();
    await store.createSession(session, []);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        store.saveProgress(session.upgradeId, { step: 0, stage: 'STARTING' }, { step: 0, stage: 'QUIESCING', stageStartedAt: i, errorCount: 0 }),
      ),
    );
    const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(StaleWriteError);
    expect((await store.getSession(session.upgradeId))?.progress.stageStartedAt).toBe(won[0]);
  });
});

describe('setState', () => {
  it('sets state and completed', async () => {
    const session = makeSession();
    await store.createSession(session, []);
    await store.setState(session.upgradeId, 'READY', true);
    expect(await store.getSession(session.upgradeId)).toEqual({ ...session, state: 'READY', completed: true });
  });

  it('throws SessionNotFoundError for an unknown id, and creates nothing', async () => {
    await expect(store.setState('ghost', 'READY', true)).rejects.toBeInstanceOf(SessionNotFoundError);
    const raw = await db.client.send(new GetCommand({ TableName: db.tableName, Key: sessionKey('ghost'), ConsistentRead: true }));
    expect(raw.Item).toBeUndefined();
  });
});

describe('requestCancel', () => {
  it('moves UPDATING to DELETING and returns the updated session', async () => {
    const session = makeSession();
    await store.createSession(session, []);
    const cancelled = await store.requestCancel(session.upgradeId);
    expect(cancelled).toEqual({ ...session, state: 'DELETING' });
    expect((await store.getSession(session.upgradeId))?.state).toBe('DELETING');
  });

  it('refuses a second cancel with the state it found', async () => {
    const session = makeSession();
    await store.createSession(session, []);
    await store.requestCancel(session.upgradeId);
    const again = store.requestCancel(session.upgradeId);
    await expect(again).rejects.toBeInstanceOf(SessionNotCancellableError);
    await expect(again).rejects.toMatchObject({ upgradeId: session.upgradeId, state: 'DELETING' });
  });

  it('refuses a finished session', async () => {
    const session = makeSession({ state: 'READY', completed: true });
    await store.createSession(session, []);
    await expect(store.requestCancel(session.upgradeId)).rejects.toMatchObject({ name: 'SessionNotCancellableError', state: 'READY' });
    expect((await store.getSession(session.upgradeId))?.state).toBe('READY');
  });

  it('throws SessionNotFoundError for an unknown id', async () => {
    await expect(store.requestCancel('nobody')).rejects.toBeInstanceOf(SessionNotFoundError);
  });
});

describe('list', () => {
  it('lists every session newest first', async () => {
    // A table of its own: the listing must not see the other tests' sessions.
    await ensureTable(db.rawClient, 'listing');
    const fresh = new DynamoDbSessionStore({ tableName: 'listing', client: db.client });
    const base = Date.parse('2030-01-01T00:00:00.000Z');
    const offsets = [5, 1, 9, 3, 7, 0, 8];
    const sessions = offsets.map((o, i) => makeSession({ upgradeId: `list-${i}`, createdAt: new Date(base + o * 60_000).toISOString() }));
    for (const s of sessions) await fresh.createSession(s, []);
    const listed = await fresh.list();
    const expected = [...sessions].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    expect(listed).toEqual(expected);
    for (const s of listed) for (const key of KEY_ATTRIBUTES) expect(s).not.toHaveProperty(key);
  });
});

describe('AWS errors', () => {
  it('passes errors other than failed conditions through unchanged', async () => {
    const broken = new DynamoDbSessionStore({ tableName: 'no-such-table', client: db.client });
    await expect(broken.saveProgress('x', { step: 0, stage: 'STARTING' }, makeSession().progress)).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
    await expect(broken.locks.tryLockNodes('me', ['n1'])).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });
});

describe('removeEnded', () => {
  it('removes an ended session with its plan, nodes and messages; refuses one still running; 404 once gone', async () => {
    const running = makeSession();
    await store.createSession(running, makePlan(1200));
    await store.putNodes(running.upgradeId, [{ name: 'x1', index: 0, status: 'UPGRADED' }]);
    await store.messages.append(running.upgradeId, 'hello');
    await expect(store.removeEnded(running.upgradeId)).rejects.toBeInstanceOf(SessionNotCancellableError);
    expect(await store.getSession(running.upgradeId)).toBeDefined();

    await store.setState(running.upgradeId, 'DELETED', false);
    expect(await store.removeEnded(running.upgradeId)).toMatchObject({ upgradeId: running.upgradeId, state: 'DELETED' });
    const left = await db.client.send(
      new QueryCommand({ TableName: db.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': sessionPk(running.upgradeId) } }),
    );
    expect(left.Items).toEqual([]);
    await expect(store.removeEnded(running.upgradeId)).rejects.toBeInstanceOf(SessionNotFoundError);
  });
});

describe("reopenStopped (a person's resume)", () => {
  const at = (stage: Progress['stage'], extra: Partial<Progress> = {}): Progress => ({ step: 1, stage, stageStartedAt: 5, errorCount: 0, ...extra });

  it('withdraws a stop nothing finished: STOPPING -> UPDATING, the progress as it was (a lock-step stop sequence under way kept, to put its step back first)', async () => {
    const underWay = at('CANCELLING', { cancelMode: 'resume-step', stop: { stage: 'STARTING', step: 1 } });
    const session = makeSession({ state: 'STOPPING', progress: underWay });
    await store.createSession(session, makePlan(3));
    const reopened = await store.reopenStopped(session.upgradeId, underWay);
    expect(reopened).toMatchObject({ state: 'UPDATING', progress: underWay });
    expect(await store.getSession(session.upgradeId)).toMatchObject({ state: 'UPDATING', progress: underWay });
  });

  it('reopens a STOPPED session at its resumed progress, and one that died between its STOPPED progress and its state too', async () => {
    const resumed = at('STARTING');
    for (const state of ['STOPPED', 'STOPPING'] as const) {
      const session = makeSession({ upgradeId: `stopped-${state}`, state, progress: at('STOPPED', { stop: { stage: 'STARTING', step: 1 } }) });
      await store.createSession(session, makePlan(3));
      expect(await store.reopenStopped(session.upgradeId, resumed)).toMatchObject({ state: 'UPDATING', progress: resumed });
      expect(await store.getSession(session.upgradeId)).toMatchObject({ state: 'UPDATING', progress: resumed });
    }
  });

  it('leaves a running, cancelled or ended session as it is', async () => {
    for (const state of ['UPDATING', 'DELETING', 'READY'] as const) {
      const session = makeSession({ upgradeId: `left-${state}`, state, progress: at('BOOTING') });
      await store.createSession(session, makePlan(3));
      expect(await store.reopenStopped(session.upgradeId, at('STARTING'))).toMatchObject({ state, progress: at('BOOTING') });
    }
  });
});

describe('messages.recent', () => {
  it('reads the newest messages alone, oldest first, timed as listTimed reads them', async () => {
    const session = makeSession();
    await store.createSession(session, []);
    expect(await store.messages.recent(session.upgradeId, 3)).toEqual([]);
    for (let i = 0; i < 5; i++) await store.messages.append(session.upgradeId, `message ${i}`);
    const all = await store.messages.listTimed(session.upgradeId);
    expect(await store.messages.recent(session.upgradeId, 3)).toEqual(all.slice(-3));
    expect((await store.messages.recent(session.upgradeId, 3)).map((m) => m.text)).toEqual(['message 2', 'message 3', 'message 4']);
    expect(await store.messages.recent(session.upgradeId, 10)).toEqual(all);
    expect(await store.messages.recent(session.upgradeId, 0)).toEqual([]);
  });
});

describe('site events: parkForSiteEvent / noteSiteEvent (issue 29)', () => {
  it('parks only while no event came since the count the increment read; a firing takes the token once; an operator request counts too', async () => {
    const session = makeSession({ state: 'UPDATING' });
    await store.createSession(session, makePlan(2));
    expect(await store.parkForSiteEvent(session.upgradeId, 'token-1', 0, [])).toBe(true);
    expect(await store.noteSiteEvent(session.upgradeId, 'up')).toEqual({ taskToken: 'token-1' });
    // Taken: a second firing counts, wakes nothing.
    expect(await store.noteSiteEvent(session.upgradeId, 'up')).toEqual({});
    expect((await store.getSession(session.upgradeId))!.siteEventCount).toBe(2);
    // An increment that read count 1 is behind: its park fails (it looks again at once); one that read 2 parks.
    expect(await store.parkForSiteEvent(session.upgradeId, 'token-2', 1, [])).toBe(false);
    expect(await store.parkForSiteEvent(session.upgradeId, 'token-2', 2, [])).toBe(true);
    expect(await store.noteSiteEvent(session.upgradeId)).toEqual({ taskToken: 'token-2' });
  });

  it('a firing of a kind the parked wait does not end leaves it parked and uncounted; one it ends on wakes it', async () => {
    const session = makeSession({ state: 'UPDATING' });
    await store.createSession(session, makePlan(2));
    expect(await store.parkForSiteEvent(session.upgradeId, 'boot-wait', 0, ['down', 'up'])).toBe(true);
    // The node's own drain firing while it reboots: not what the boot wait is for.
    expect(await store.noteSiteEvent(session.upgradeId, 'drained')).toBeUndefined();
    expect(await store.getSession(session.upgradeId)).toMatchObject({ siteWaitToken: 'boot-wait', siteWaitEvents: ['down', 'up'] });
    expect((await store.getSession(session.upgradeId))!.siteEventCount).toBeUndefined();
    expect(await store.noteSiteEvent(session.upgradeId, 'up')).toEqual({ taskToken: 'boot-wait' });
    const after = (await store.getSession(session.upgradeId))!;
    expect(after.siteWaitToken).toBeUndefined();
    expect(after.siteWaitEvents).toBeUndefined();
    expect(after.siteEventCount).toBe(1);
  });

  it('does not park an ended session; a firing for a session that does not exist changes nothing', async () => {
    const session = makeSession({ state: 'READY' });
    await store.createSession(session, makePlan(1));
    expect(await store.parkForSiteEvent(session.upgradeId, 'token', 0, [])).toBe(false);
    expect(await store.noteSiteEvent('never-created', 'up')).toBeUndefined();
  });
});
