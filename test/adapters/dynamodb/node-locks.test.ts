import { DynamoDbSessionStore } from '../../../adapters/dynamodb/dynamodb-session-store';
import { startLocalDynamoDb } from '../../../engine/local-dynamodb';
import type { LocalDynamoDb } from '../../../engine/local-dynamodb';

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
    const results = await Promise.all(racers.map((owner) => store.tryLockNodes(owner, ['n-race'])));
    const winners = racers.filter((_, i) => results[i]!.size === 0);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!;
    for (const [i, held] of results.entries()) {
      if (racers[i] !== winner) expect([...held]).toEqual([['n-race', winner]]);
    }
    expect(await store.getLockOwners(['n-race'])).toEqual(new Map([['n-race', winner]]));
  });

  it('lets the owner take its own lock again (a retried handler)', async () => {
    expect((await store.tryLockNodes('retry', ['n-r1', 'n-r2'])).size).toBe(0);
    expect((await store.tryLockNodes('retry', ['n-r1', 'n-r2', 'n-r3'])).size).toBe(0);
    expect(await store.getLockOwners(['n-r1', 'n-r2', 'n-r3'])).toEqual(
      new Map([
        ['n-r1', 'retry'],
        ['n-r2', 'retry'],
        ['n-r3', 'retry'],
      ]),
    );
  });

  it('reports only the nodes held by others; partial success keeps the free ones', async () => {
    await store.tryLockNodes('first', ['n-p1', 'n-p2']);
    const held = await store.tryLockNodes('second', ['n-p1', 'n-p2', 'n-p3', 'n-p3']);
    expect(held).toEqual(
      new Map([
        ['n-p1', 'first'],
        ['n-p2', 'first'],
      ]),
    );
    expect((await store.getLockOwners(['n-p3'])).get('n-p3')).toBe('second');
  });

  it('leaves a lock alone when someone else releases it, and frees it when the owner does', async () => {
    await store.tryLockNodes('holder', ['n-rel']);
    await store.releaseNodeLocks('intruder', ['n-rel', 'n-never-locked']);
    expect(await store.getLockOwners(['n-rel'])).toEqual(new Map([['n-rel', 'holder']]));
    expect(await store.tryLockNodes('intruder', ['n-rel'])).toEqual(new Map([['n-rel', 'holder']]));

    await store.releaseNodeLocks('holder', ['n-rel']);
    expect((await store.getLockOwners(['n-rel'])).size).toBe(0);
    expect((await store.tryLockNodes('intruder', ['n-rel'])).size).toBe(0);
  });

  it('splits overlapping node lists between two racing owners: every node has one owner, each told of the other', async () => {
    const nodes = Array.from({ length: 120 }, (_, i) => `n-ov${i}`);
    const listA = nodes.slice(0, 80);
    const listB = [...nodes.slice(40)].reverse(); // opposite order: the two meet in the middle of the overlap
    const [heldFromA, heldFromB] = await Promise.all([store.tryLockNodes('A', listA), store.tryLockNodes('B', listB)]);
    const lockOwners = await store.getLockOwners(nodes);

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
    await store.tryLockNodes('bulk', nodes.filter((_, i) => i % 3 === 0));
    const lockOwners = await store.getLockOwners([...nodes, nodes[0]!]);
    expect([...lockOwners.keys()].sort()).toEqual(nodes.filter((_, i) => i % 3 === 0).sort());
    expect(new Set(lockOwners.values())).toEqual(new Set(['bulk']));
  });
});
