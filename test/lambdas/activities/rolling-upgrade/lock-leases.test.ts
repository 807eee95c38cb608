import { jest } from '@jest/globals';
import { DynamoDbSessionStore } from '../../../../adapters/dynamodb/dynamodb-session-store';
import type { WlmNode } from '../../../../core/site/site-nodes';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../../local/local-dynamodb';
import { runActivity } from '../../../../lambdas/activities/rolling-upgrade/activity-runner';
import { checkQuiesce } from '../../../../lambdas/activities/rolling-upgrade/check-quiesce';
import { startStep } from '../../../../lambdas/activities/rolling-upgrade/start-step';
import { defaultSettings, type RollingUpgradeDependencies } from '../../../../lambdas/activities/rolling-upgrade/dependencies';
import type { Site } from '../../../../ports/site';
import { createdSession, workflowAt } from '../../../support/upgrade-sessions';

/**
 * The lease, heartbeat and fencing of node locks as the activities use them: the store on the embedded DynamoDB,
 * a mocked clock and a mocked site that records every node-changing call.
 */
let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb();
});
afterAll(() => db.close());

const LEASE_SECONDS = 600;
let now = 1_700_000_000_000;
const clock = { now: () => now };

function fakeSite() {
  const drained = new Set<string>();
  const busy = (name: string): WlmNode =>
    drained.has(name) ? { name, base: 'MIXED', flags: ['DRAIN'], reason: 'rolling-upgrade' } : { name, base: 'MIXED', flags: [] };
  const calls: string[] = [];
  const site: Site = {
    workloadManager: {
      getNodes: jest.fn(async (names: readonly string[]) => new Map(names.map((n) => [n, busy(n)]))),
      drain: jest.fn(async (name: string) => {
        drained.add(name);
        calls.push(`drain ${name}`);
      }),
      resume: jest.fn(async (name: string) => void calls.push(`resume ${name}`)),
      fail: jest.fn(async (name: string) => void calls.push(`fail ${name}`)),
      drainNodes: jest.fn(async (names: readonly string[]) => {
        for (const name of names) drained.add(name);
        calls.push(...names.map((n) => `drain ${n}`));
      }),
      resumeNodes: jest.fn(async (names: readonly string[]) => void calls.push(...names.map((n) => `resume ${n}`))),
      failNodes: jest.fn(async (names: readonly string[]) => void calls.push(...names.map((n) => `fail ${n}`))),
    },
    bootService: {
      templateExists: jest.fn(async () => true),
      createSession: jest.fn(async () => {
        throw new Error('no boot in this test');
      }),
      getSession: jest.fn(async () => undefined),
    },
    inventory: {
      getGroupMembers: jest.fn(async (label: string) => (label === 'compute' ? ['a1', 'a2', 'a3', 'a4'] : [])),
      addGroupMembers: jest.fn(async (label: string, names: readonly string[]) => void calls.push(`add ${label} ${names.join(',')}`)),
      removeGroupMembers: jest.fn(async (label: string, names: readonly string[]) => void calls.push(`remove ${label} ${names.join(',')}`)),
      listNodes: jest.fn(async () => []),
    },
  } as unknown as Site;
  return { site, calls };
}

const sessionAt = (store: DynamoDbSessionStore, id: string) => createdSession(store, now, { upgradeId: id, quiesceTimeoutSeconds: 1000 });

describe('node locks in the activities: lease, heartbeat, fencing', () => {
  it('renews the leases at an increment whose heartbeat is due, records the tokens, and a stale holder that lost its nodes does not act on them', async () => {
    const store = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client, clock });
    const { site, calls } = fakeSite();
    const deps: RollingUpgradeDependencies = { store, site, clock, settings: { ...defaultSettings, lockLeaseSeconds: LEASE_SECONDS } };
    const a = await sessionAt(store, 'lease-a');

    // STARTING: the plan is taken, step 0 (a1, a2) locked and drained; the records carry the fencing tokens.
    expect((await runActivity('STARTING', workflowAt(a.upgradeId, 'STARTING'), deps, startStep)).stage).toBe('QUIESCING');
    expect(calls).toEqual(['drain a1', 'drain a2']);
    const locks = await store.locks.getNodeLocks(['a1', 'a2']);
    expect(locks.get('a1')).toEqual({ owner: 'lease-a', leaseExpiresAt: now + LEASE_SECONDS * 1000, fencingToken: 1 });
    const records = await store.getNodes(a.upgradeId, [
      { name: 'a1', index: 0 },
      { name: 'a2', index: 1 },
    ]);
    expect(records.map((r) => r.lockToken)).toEqual([1, 1]);

    // An increment with no renewal on record renews the leases (the heartbeat): past the first lease, they still run.
    now += 500_000;
    await runActivity('QUIESCING', workflowAt(a.upgradeId, 'QUIESCING'), deps, checkQuiesce);
    expect((await store.locks.getNodeLocks(['a1'])).get('a1')!.leaseExpiresAt).toBe(now + LEASE_SECONDS * 1000);

    // The session then stalls past its lease; session B takes a2 over.
    now += (LEASE_SECONDS + 1) * 1000;
    expect((await store.locks.tryLockNodes('lease-b', ['a2'])).size).toBe(0);

    // A's next increment: its quiesce timeout has passed, so it would fail both busy nodes. It fails
    // a1 only, and records a2 as lost to B, with a message.
    calls.length = 0;
    await runActivity('QUIESCING', workflowAt(a.upgradeId, 'QUIESCING'), deps, checkQuiesce);
    expect(calls).toEqual(['fail a1', 'add failed a1']);
    const after = await store.getNodes(a.upgradeId, [
      { name: 'a1', index: 0 },
      { name: 'a2', index: 1 },
    ]);
    expect(after.map((r) => [r.status, r.phase, r.reason])).toEqual([
      ['FAILED', 'DONE', 'upgrading-time-out-quiescing'],
      ['IN_PROGRESS', 'LOCK_LOST', 'lock-lost-to-lease-b'],
    ]);
    expect(await store.messages.list(a.upgradeId)).toContainEqual(
      expect.stringMatching(/1 node\(s\) not ours \(locked by session lease-b\) are left alone: a2/),
    );
    expect(await store.locks.getLockOwners(['a1', 'a2'])).toEqual(new Map([['a2', 'lease-b']]));
  });

  it('stops with LockLostError right before acting when the lock changed hands within the increment', async () => {
    const store = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client, clock });
    const { site, calls } = fakeSite();
    (site.inventory.getGroupMembers as jest.Mock<Site['inventory']['getGroupMembers']>).mockImplementation(async (label) =>
      label === 'compute' ? ['c1', 'c2'] : [],
    );
    const deps: RollingUpgradeDependencies = { store, site, clock, settings: { ...defaultSettings, lockLeaseSeconds: LEASE_SECONDS } };
    const c = await sessionAt(store, 'lease-c');
    await runActivity('STARTING', workflowAt(c.upgradeId, 'STARTING'), deps, startStep);
    calls.length = 0;
    now += 1001_000;
    // The takeover lands after the heartbeat but before the fail (the session stalled that long while it observed the site).
    (site.workloadManager.getNodes as jest.Mock<Site['workloadManager']['getNodes']>).mockImplementationOnce(async (names) => {
      now += (LEASE_SECONDS + 1) * 1000;
      expect((await store.locks.tryLockNodes('lease-d', ['c1', 'c2'])).size).toBe(0);
      return new Map(names.map((n) => [n, { name: n, base: 'MIXED', flags: ['DRAIN'], reason: 'rolling-upgrade' } as WlmNode]));
    });
    const state = await runActivity('QUIESCING', workflowAt(c.upgradeId, 'QUIESCING'), deps, checkQuiesce);
    expect(calls).toEqual([]);
    expect(state.stage).toBe('QUIESCING');
    const records = await store.getNodes(c.upgradeId, [
      { name: 'c1', index: 0 },
      { name: 'c2', index: 1 },
    ]);
    expect(records.map((r) => r.phase)).toEqual(['LOCK_LOST', 'LOCK_LOST']);
    // With nothing left of the step, the next increment moves on without touching the nodes.
    await runActivity('QUIESCING', workflowAt(c.upgradeId, 'QUIESCING'), deps, checkQuiesce);
    expect(calls).toEqual([]);
  });

  it('renews a quarter lease apart, not at every increment, and still notices a lock lost while it stalled', async () => {
    const store = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client, clock });
    const { site, calls } = fakeSite();
    (site.inventory.getGroupMembers as jest.Mock<Site['inventory']['getGroupMembers']>).mockImplementation(async (label) =>
      label === 'compute' ? ['e1', 'e2'] : [],
    );
    const deps: RollingUpgradeDependencies = { store, site, clock, settings: { ...defaultSettings, lockLeaseSeconds: LEASE_SECONDS } };
    const e = await sessionAt(store, 'lease-e');
    const lease = async () => (await store.locks.getNodeLocks(['e1'])).get('e1')!.leaseExpiresAt;
    // The workflow state carries the last renewal from increment to increment.
    let state = await runActivity('STARTING', workflowAt(e.upgradeId, 'STARTING'), deps, startStep);
    const taken = await lease();
    expect(state.locksRenewedAt).toBe(now);

    // Within a quarter lease the increments renew nothing (and make no lock write before acting).
    const renewals = jest.spyOn(store.locks, 'renewNodeLocks');
    now += (LEASE_SECONDS / 4 - 1) * 1000;
    state = await runActivity('QUIESCING', state, deps, checkQuiesce);
    expect(await lease()).toBe(taken);
    expect(renewals).not.toHaveBeenCalled();

    // A quarter lease after the last renewal, the heartbeat renews (and is recorded).
    now += 1000;
    state = await runActivity('QUIESCING', state, deps, checkQuiesce);
    expect(await lease()).toBe(now + LEASE_SECONDS * 1000);
    expect(state.locksRenewedAt).toBe(now);
    expect(renewals).toHaveBeenCalledTimes(1);

    // The session stalls past its lease (and its quiesce timeout) and session F takes e2 over: a lease that ran out
    // is always a quarter lease old, so the next increment renews, finds e2 lost and acts on e1 alone.
    now += 1001_000 - LEASE_SECONDS * 250 + (LEASE_SECONDS + 1) * 1000;
    expect((await store.locks.tryLockNodes('lease-f', ['e2'])).size).toBe(0);
    calls.length = 0;
    await runActivity('QUIESCING', state, deps, checkQuiesce);
    expect(calls).toEqual(['fail e1', 'add failed e1']);
    const records = await store.getNodes(e.upgradeId, [
      { name: 'e1', index: 0 },
      { name: 'e2', index: 1 },
    ]);
    expect(records.map((r) => [r.status, r.phase])).toEqual([
      ['FAILED', 'DONE'],
      ['IN_PROGRESS', 'LOCK_LOST'],
    ]);
    renewals.mockRestore();
  });

  it('checks the locks right before acting when the increment itself outlasted a quarter lease', async () => {
    const store = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client, clock });
    const { site, calls } = fakeSite();
    (site.inventory.getGroupMembers as jest.Mock<Site['inventory']['getGroupMembers']>).mockImplementation(async (label) =>
      label === 'compute' ? ['g1', 'g2'] : [],
    );
    const deps: RollingUpgradeDependencies = { store, site, clock, settings: { ...defaultSettings, lockLeaseSeconds: LEASE_SECONDS } };
    const g = await sessionAt(store, 'lease-g');
    const state = await runActivity('STARTING', workflowAt(g.upgradeId, 'STARTING'), deps, startStep);
    calls.length = 0;
    now += 1001_000;
    // Fresh at the increment's start (no heartbeat then); the site read stalls past the lease and session H takes both.
    (site.workloadManager.getNodes as jest.Mock<Site['workloadManager']['getNodes']>).mockImplementationOnce(async (names) => {
      now += (LEASE_SECONDS + 1) * 1000;
      expect((await store.locks.tryLockNodes('lease-h', ['g1', 'g2'])).size).toBe(0);
      return new Map(names.map((n) => [n, { name: n, base: 'MIXED', flags: ['DRAIN'], reason: 'rolling-upgrade' } as WlmNode]));
    });
    await runActivity('QUIESCING', { ...state, locksRenewedAt: now }, deps, checkQuiesce);
    expect(calls).toEqual([]);
    const records = await store.getNodes(g.upgradeId, [
      { name: 'g1', index: 0 },
      { name: 'g2', index: 1 },
    ]);
    expect(records.map((r) => r.phase)).toEqual(['LOCK_LOST', 'LOCK_LOST']);
  });
});
