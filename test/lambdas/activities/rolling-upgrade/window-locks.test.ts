import { jest } from '@jest/globals';
import { DynamoDbSessionStore } from '../../../../adapters/dynamodb/dynamodb-session-store';
import type { WlmNode } from '../../../../core/site/site-nodes';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../../local/local-dynamodb';
import { runActivity } from '../../../../lambdas/activities/rolling-upgrade/activity-runner';
import { advanceWindow } from '../../../../lambdas/activities/rolling-upgrade/advance-window';
import { startStep } from '../../../../lambdas/activities/rolling-upgrade/start-step';
import { defaultSettings, type RollingUpgradeDependencies } from '../../../../lambdas/activities/rolling-upgrade/dependencies';
import type { Site } from '../../../../ports/site';
import { createdSession, workflowAt } from '../../../support/upgrade-sessions';

/**
 * Mode window takes each node's lock (lease + fencing token) before it acts on it: two sessions
 * over overlapping nodes, the store on the embedded DynamoDB, a mocked site shared by both that records who did what.
 */
let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb();
});
afterAll(() => db.close());

const LEASE_SECONDS = 600;
let now = 1_700_000_000_000;
const clock = { now: () => now };

/** One site (nodes stay busy: drained, never quiet), seen by several sessions; every node-changing call is logged with its caller. */
function sharedSite(members: Record<string, string[]>) {
  const drained = new Set<string>();
  const calls: string[] = [];
  const wlm = (name: string): WlmNode =>
    drained.has(name) ? { name, base: 'MIXED', flags: ['DRAIN'], reason: 'rolling-upgrade' } : { name, base: 'MIXED', flags: [] };
  const siteFor = (who: string): Site =>
    ({
      workloadManager: {
        getNodes: jest.fn(async (names: readonly string[]) => new Map(names.map((n) => [n, wlm(n)]))),
        drainNodes: jest.fn(async (names: readonly string[]) => {
          for (const n of names) drained.add(n);
          calls.push(...names.map((n) => `${who} drain ${n}`));
        }),
        resumeNodes: jest.fn(async (names: readonly string[]) => void calls.push(...names.map((n) => `${who} resume ${n}`))),
        failNodes: jest.fn(async (names: readonly string[]) => void calls.push(...names.map((n) => `${who} fail ${n}`))),
      },
      bootService: { templateExists: jest.fn(async () => true), createSession: jest.fn(), getSession: jest.fn(async () => undefined) },
      inventory: {
        getGroupMembers: jest.fn(async (label: string) => members[`${who}:${label}`] ?? []),
        addGroupMembers: jest.fn(async (label: string, names: readonly string[]) => void calls.push(`${who} add ${label} ${names.join(',')}`)),
        removeGroupMembers: jest.fn(async () => undefined),
        listNodes: jest.fn(async () => []),
      },
    }) as unknown as Site;
  return { siteFor, calls };
}

const windowSession = (store: DynamoDbSessionStore, id: string) =>
  createdSession(store, now, { upgradeId: id, mode: 'window', maxUnavailable: 4, quiesceTimeoutSeconds: 3000 });

describe('node locks in mode window: each node locked with a lease and a fencing token before it is touched', () => {
  it('two sessions over overlapping nodes: none is touched twice, and a session never acts on a node it does not hold', async () => {
    const store = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client, clock });
    const { siteFor, calls } = sharedSite({ 'A:compute': ['w1', 'w2', 'w3', 'w4'], 'B:compute': ['w3', 'w4', 'w5', 'w6'] });
    const depsFor = (who: string): RollingUpgradeDependencies => ({
      store,
      site: siteFor(who),
      clock,
      settings: { ...defaultSettings, lockLeaseSeconds: LEASE_SECONDS },
    });
    const [a, b] = [await windowSession(store, 'win-a'), await windowSession(store, 'win-b')];
    const step = async (who: 'A' | 'B', id: string) => {
      const session = (await store.getSession(id))!;
      const stage = session.progress.stage;
      return runActivity(stage, workflowAt(id, stage), depsFor(who), stage === 'STARTING' ? startStep : advanceWindow);
    };

    // A starts its window: every node of its plan locked (lease + token) and drained.
    await step('A', a.upgradeId);
    await step('A', a.upgradeId);
    expect(calls).toEqual(['A drain w1', 'A drain w2', 'A drain w3', 'A drain w4']);
    const aLocks = await store.locks.getNodeLocks(['w1', 'w2', 'w3', 'w4']);
    expect([...aLocks.values()].map((l) => [l.owner, l.leaseExpiresAt])).toEqual(Array(4).fill(['win-a', now + LEASE_SECONDS * 1000]));
    const aRecords = await store.listNodes(a.upgradeId);
    expect(aRecords.map((r) => [r.name, r.lockToken])).toEqual(expect.arrayContaining(['w1', 'w2', 'w3', 'w4'].map((n) => [n, aLocks.get(n)!.fencingToken])));

    // B's window: w3 and w4 are A's, so B drains only w5 and w6, and keeps waiting for the others.
    await step('B', b.upgradeId);
    await step('B', b.upgradeId);
    await step('B', b.upgradeId);
    expect(calls.filter((c) => c.startsWith('B'))).toEqual(['B drain w5', 'B drain w6']);

    // A's heartbeat keeps its leases alive past the first lease: B still cannot take w3.
    now += 500_000;
    await step('A', a.upgradeId);
    now += 500_000;
    await step('B', b.upgradeId);
    expect(calls.filter((c) => c.startsWith('B'))).toEqual(['B drain w5', 'B drain w6']);
    expect((await store.locks.getLockOwners(['w3', 'w4'])).get('w3')).toBe('win-a');

    // A stalls past its lease; B takes w3 and w4 over (w3, w4 were drained already: B records them in flight without a second drain).
    now += (LEASE_SECONDS + 1) * 1000;
    await step('B', b.upgradeId);
    expect(await store.locks.getLockOwners(['w3', 'w4'])).toEqual(
      new Map([
        ['w3', 'win-b'],
        ['w4', 'win-b'],
      ]),
    );

    // A's next increment passes its quiesce timeout: it fails the nodes it still holds (w1, w2), and only those;
    // w3 and w4 are recorded lost to B, with a message, and left alone.
    now += 3000_000;
    const before = calls.length;
    await step('A', a.upgradeId);
    const aNow = calls.slice(before);
    expect(aNow.filter((c) => /w3|w4/.test(c))).toEqual([]);
    expect(aNow).toEqual(expect.arrayContaining(['A fail w1', 'A fail w2']));
    const after = new Map((await store.listNodes(a.upgradeId)).map((r) => [r.name, r]));
    expect([after.get('w3')!.phase, after.get('w3')!.reason]).toEqual(['LOCK_LOST', 'lock-lost-to-win-b']);
    expect(await store.messages.list(a.upgradeId)).toContainEqual(
      expect.stringMatching(/^Window: 2 node\(s\) not ours \(locked by session win-b\) are left alone: w3, w4/),
    );

    // No node was drained twice, and every drain came from the session holding the node's lock at that time.
    const drains = calls.filter((c) => c.includes(' drain '));
    expect(new Set(drains.map((c) => c.split(' ')[2])).size).toBe(drains.length);
    // A finishes without ever touching w3 or w4 again.
    for (let i = 0; i < 5; i++) await step('A', a.upgradeId);
    expect(calls.filter((c) => c.startsWith('A') && /w3|w4/.test(c))).toEqual(['A drain w3', 'A drain w4']);
  });
});
