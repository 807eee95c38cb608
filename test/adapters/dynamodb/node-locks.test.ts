import { DynamoDbSessionStore } from '../../../adapters/dynamodb/dynamodb-session-store';
import { startLocalDynamoDb } from '../../../local/local-dynamodb';
import type { LocalDynamoDb } from '../../../local/local-dynamodb';

let db: LocalDynamoDb;
let store: DynamoDbSessionStore;

beforeAll(async () => {
  db = await startLocalDynamoDb();
  store = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client });
});
afterAll(() => db.close());

const owners = (n: number, prefix: string): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe('node locks', () => {
  it('lets exactly one of 50 racing owners take a node, and tells every loser who holds it', async () => {
    const racers = owners(50, 'race');
    const results = await Promise.all(racers.map((owner) => store.locks.tryLockNodes(owner, ['n-race'])));
    const winners = racers.filter((_, i) => results[i]!.size === 0);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!;
    for (const [i, held] of results.entries()) {
      if (racers[i] !== winner) expect([...held]).toEqual([['n-race', winner]]);
    }
    expect(await store.locks.getLockOwners(['n-race'])).toEqual(new Map([['n-race', winner]]));
  });

  it('lets the owner take its own lock again (a retried handler)', async () => {
    expect((await store.locks.tryLockNodes('retry', ['n-r1', 'n-r2'])).size).toBe(0);
    expect((await store.locks.tryLockNodes('retry', ['n-r1', 'n-r2', 'n-r3'])).size).toBe(0);
    expect(await store.locks.getLockOwners(['n-r1', 'n-r2', 'n-r3'])).toEqual(
      new Map([
        ['n-r1', 'retry'],
        ['n-r2', 'retry'],
        ['n-r3', 'retry'],
      ]),
    );
  });

  it('reports only the nodes held by others; partial success keeps the free ones', async () => {
    await store.locks.tryLockNodes('first', ['n-p1', 'n-p2']);
    const held = await store.locks.tryLockNodes('second', ['n-p1', 'n-p2', 'n-p3', 'n-p3']);
    expect(held).toEqual(
      new Map([
        ['n-p1', 'first'],
        ['n-p2', 'first'],
      ]),
    );
    expect((await store.locks.getLockOwners(['n-p3'])).get('n-p3')).toBe('second');
  });

  it('leaves a lock alone when someone else releases it, and frees it when the owner does', async () => {
    await store.locks.tryLockNodes('holder', ['n-rel']);
    await store.locks.releaseNodeLocks('intruder', ['n-rel', 'n-never-locked']);
    expect(await store.locks.getLockOwners(['n-rel'])).toEqual(new Map([['n-rel', 'holder']]));
    expect(await store.locks.tryLockNodes('intruder', ['n-rel'])).toEqual(new Map([['n-rel', 'holder']]));

    await store.locks.releaseNodeLocks('holder', ['n-rel']);
    expect((await store.locks.getLockOwners(['n-rel'])).size).toBe(0);
    expect((await store.locks.tryLockNodes('intruder', ['n-rel'])).size).toBe(0);
  });

  it('splits overlapping node lists between two racing owners: every node has one owner, each told of the other', async () => {
    const nodes = Array.from({ length: 120 }, (_, i) => `n-ov${i}`);
    const listA = nodes.slice(0, 80);
    const listB = [...nodes.slice(40)].reverse(); // opposite order: the two meet in the middle of the overlap
    const [heldFromA, heldFromB] = await Promise.all([store.locks.tryLockNodes('A', listA), store.locks.tryLockNodes('B', listB)]);
    const lockOwners = await store.locks.getLockOwners(nodes);

    expect(lockOwners.size).toBe(nodes.length);
    for (const node of nodes.slice(0, 40)) expect(lockOwners.get(node)).toBe('A');
    for (const node of nodes.slice(80)) expect(lockOwners.get(node)).toBe('B');
    for (const node of nodes.slice(40, 80)) {
      const owner = lockOwners.get(node);
      // The loser of each contested node is told the winner; the winner is told nothing about it.
      if (owner === 'A') {
        expect(heldFromB.get(node)).toBe('A');
        expect(heldFromA.has(node)).toBe(false);
      } else {
        expect(owner).toBe('B');
        expect(heldFromA.get(node)).toBe('B');
        expect(heldFromB.has(node)).toBe(false);
      }
    }
    expect(heldFromA.size + heldFromB.size).toBe(40);
  });

  it('answers owners in batches past 100 nodes and omits unlocked ones', async () => {
    const nodes = Array.from({ length: 230 }, (_, i) => `n-many${i}`);
    await store.locks.tryLockNodes(
      'bulk',
      nodes.filter((_, i) => i % 3 === 0),
    );
    const lockOwners = await store.locks.getLockOwners([...nodes, nodes[0]!]);
    expect([...lockOwners.keys()].sort()).toEqual(nodes.filter((_, i) => i % 3 === 0).sort());
    expect(new Set(lockOwners.values())).toEqual(new Set(['bulk']));
  });
});

describe('leased locks with fencing tokens', () => {
  let now = 1_700_000_000_000;
  let leased: DynamoDbSessionStore;
  beforeAll(() => {
    leased = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client, clock: { now: () => now }, lockLeaseSeconds: 600 });
  });
  const tokenOf = async (node: string): Promise<number> => (await leased.locks.getNodeLocks([node])).get(node)!.fencingToken;

  it('gives each lock an owner, a lease from the store clock and a token bumped on every acquisition', async () => {
    expect((await leased.locks.tryLockNodes('A', ['l-1'])).size).toBe(0);
    expect(await leased.locks.getNodeLocks(['l-1'])).toEqual(new Map([['l-1', { owner: 'A', leaseExpiresAt: now + 600_000, fencingToken: 1 }]]));
    await leased.locks.tryLockNodes('A', ['l-1'], 30);
    expect(await leased.locks.getNodeLocks(['l-1'])).toEqual(new Map([['l-1', { owner: 'A', leaseExpiresAt: now + 30_000, fencingToken: 2 }]]));
  });

  it('refuses a second owner while the lease runs, and lets it take over once the lease ran out', async () => {
    await leased.locks.tryLockNodes('A', ['l-2'], 60);
    now += 59_999;
    expect(await leased.locks.tryLockNodes('B', ['l-2'])).toEqual(new Map([['l-2', 'A']]));
    now += 1;
    expect((await leased.locks.tryLockNodes('B', ['l-2'])).size).toBe(0);
    expect(await leased.locks.getNodeLocks(['l-2'])).toEqual(new Map([['l-2', { owner: 'B', leaseExpiresAt: now + 600_000, fencingToken: 2 }]]));
  });

  it('lets exactly one of 20 racing sessions take over an expired lock', async () => {
    await leased.locks.tryLockNodes('dead', ['l-race'], 1);
    now += 2000;
    const racers = owners(20, 'taker');
    const results = await Promise.all(racers.map((owner) => leased.locks.tryLockNodes(owner, ['l-race'])));
    const winners = racers.filter((_, i) => results[i]!.size === 0);
    expect(winners).toHaveLength(1);
    expect((await leased.locks.getNodeLocks(['l-race'])).get('l-race')).toMatchObject({ owner: winners[0], fencingToken: 2 });
  });

  it('renews the leases of the holder with its current token (the heartbeat), pushing takeover back', async () => {
    await leased.locks.tryLockNodes('A', ['l-3', 'l-4'], 60);
    const held = new Map([
      ['l-3', await tokenOf('l-3')],
      ['l-4', await tokenOf('l-4')],
    ]);
    now += 50_000;
    expect((await leased.locks.renewNodeLocks('A', held, 60)).size).toBe(0);
    now += 50_000; // 100 s after the lock, 50 s after the renewal
    expect(await leased.locks.tryLockNodes('B', ['l-3', 'l-4'])).toEqual(
      new Map([
        ['l-3', 'A'],
        ['l-4', 'A'],
      ]),
    );
    expect((await leased.locks.getNodeLocks(['l-3'])).get('l-3')!.leaseExpiresAt).toBe(now + 10_000);
  });

  it('keeps a lapsed lease nobody took: the holder renews it with its token', async () => {
    await leased.locks.tryLockNodes('A', ['l-5'], 1);
    const held = new Map([['l-5', await tokenOf('l-5')]]);
    now += 10_000;
    expect((await leased.locks.renewNodeLocks('A', held)).size).toBe(0);
    expect(await leased.locks.tryLockNodes('B', ['l-5'])).toEqual(new Map([['l-5', 'A']]));
  });

  it('refuses a stale holder: after a takeover its renewal reports the lock lost, with the new holder, and changes nothing', async () => {
    await leased.locks.tryLockNodes('A', ['l-6'], 1);
    const staleToken = await tokenOf('l-6');
    now += 2000;
    await leased.locks.tryLockNodes('B', ['l-6']);
    const after = (await leased.locks.getNodeLocks(['l-6'])).get('l-6')!;
    now += 1000;
    expect(await leased.locks.renewNodeLocks('A', new Map([['l-6', staleToken]]))).toEqual(new Map([['l-6', after]]));
    expect((await leased.locks.getNodeLocks(['l-6'])).get('l-6')).toEqual(after);
    // Nor does A's release free B's lock.
    await leased.locks.releaseNodeLocks('A', ['l-6']);
    expect(await leased.locks.getLockOwners(['l-6'])).toEqual(new Map([['l-6', 'B']]));
  });

  it('refuses an old token of the same owner (a stale twin of a resumed session), and a lock released meanwhile', async () => {
    await leased.locks.tryLockNodes('A', ['l-7', 'l-8']);
    const old = await tokenOf('l-7');
    await leased.locks.tryLockNodes('A', ['l-7']); // the resumed session re-acquires: new token
    await leased.locks.releaseNodeLocks('A', ['l-8']);
    const lost = await leased.locks.renewNodeLocks(
      'A',
      new Map([
        ['l-7', old],
        ['l-8', 1],
      ]),
    );
    expect([...lost.keys()].sort()).toEqual(['l-7', 'l-8']);
    expect(lost.get('l-7')).toMatchObject({ owner: 'A', fencingToken: old + 1 });
    expect(lost.get('l-8')).toBeUndefined();
  });

  it('keeps the token growing across a release: a holder from before the release is refused even under the same owner', async () => {
    await leased.locks.tryLockNodes('A', ['l-9']);
    await leased.locks.releaseNodeLocks('A', ['l-9']);
    expect((await leased.locks.getNodeLocks(['l-9'])).size).toBe(0);
    await leased.locks.tryLockNodes('A', ['l-9']);
    expect((await leased.locks.getNodeLocks(['l-9'])).get('l-9')).toMatchObject({ owner: 'A', fencingToken: 2 });
    expect([...(await leased.locks.renewNodeLocks('A', new Map([['l-9', 1]]))).keys()]).toEqual(['l-9']);
  });
});
