import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbEnvironmentStore, SEED_CLAIM_LEASE_MS } from '../../../adapters/dynamodb/dynamodb-environment-store';
import { upgradeRelationKey } from '../../../adapters/dynamodb/table-design';
import { cloneEnvironment } from '../../../core/environments';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../local/local-dynamodb';
import { fuelEnvironments } from '../../support/environments';

let db: LocalDynamoDb;
let store: DynamoDbEnvironmentStore;
const site = fuelEnvironments();

beforeEach(async () => {
  db = await startLocalDynamoDb();
  store = new DynamoDbEnvironmentStore({ tableName: db.tableName, client: db.client });
  await store.seed(site);
});
afterEach(() => db.close());

const draft = (originalId: number, name: string) => {
  const original = site.environments.find((e) => e.id === originalId)!;
  return cloneEnvironment(original, site.releases.find((r) => r.id === 2)!, { name, release_id: 2 }, undefined);
};

describe('DynamoDbEnvironmentStore', () => {
  it('keeps the site releases and environments, and seeding again keeps what changed since', async () => {
    expect(await store.listReleases()).toEqual(site.releases);
    expect(await store.listEnvironments()).toEqual(site.environments);
    const stored = (await store.getEnvironment(3))!;
    await store.replaceEnvironment({ ...stored.environment, status: 'update' }, stored.revision);
    await store.seed(site);
    expect((await store.getEnvironment(3))?.environment.status).toBe('update');
    expect(await store.getRelease(9)).toBeUndefined();
    expect(await store.getNode(21)).toEqual({ node: site.environments[1]!.nodes[0], clusterId: 2 });
    expect(await store.getNode(99)).toBeUndefined();
  });

  it('gives a seed an id above every declared environment and stores the 1:1 relation', async () => {
    const seed = await store.createSeed(draft(1, 'prod-8.0'));
    expect(seed.id).toBe(4);
    expect(await store.seedOf(1)).toBe(4);
    expect((await store.getEnvironment(4))?.environment).toEqual(seed);
    await expect(store.createSeed(draft(1, 'again'))).rejects.toMatchObject({
      name: 'UpgradeNotAllowedError',
      message: expect.stringContaining('environment 4'),
    });
  });

  it('lets exactly one of concurrent seeds of one original win', async () => {
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => store.createSeed(draft(3, `seed-${i}`))));
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.name)).toEqual(
      Array(7).fill('UpgradeNotAllowedError'),
    );
    expect(await store.seedOf(3)).toBe((won[0] as PromiseFulfilledResult<{ id: number }>).value.id);
    expect((await store.listEnvironments()).filter((e) => e.original_cluster_id === 3)).toHaveLength(1);
    // Only the winner drew an id: the next seed takes the one after it.
    expect((await store.createSeed(draft(1, 'prod-8.0'))).id).toBe((won[0] as PromiseFulfilledResult<{ id: number }>).value.id + 1);
  });

  it('takes over a claim whose seed never came (a crash between the writes) once its lease has run out, not before', async () => {
    // What a clone that died after its claim leaves: the relation claimed at t=0, no seed.
    await db.client.send(new PutCommand({ TableName: db.tableName, Item: { ...upgradeRelationKey(1), claimToken: 'dead', claimedAt: 0 } }));
    const at = (ms: number) => new DynamoDbEnvironmentStore({ tableName: db.tableName, client: db.client, now: () => ms });
    expect(await store.seedOf(1)).toBeUndefined();
    await expect(at(SEED_CLAIM_LEASE_MS - 1).createSeed(draft(1, 'early'))).rejects.toMatchObject({
      name: 'UpgradeNotAllowedError',
      message: expect.stringContaining('(being created)'),
    });
    const seed = await at(SEED_CLAIM_LEASE_MS + 1).createSeed(draft(1, 'prod-8.0'));
    expect(await store.seedOf(1)).toBe(seed.id);
    await expect(at(10 * SEED_CLAIM_LEASE_MS).createSeed(draft(1, 'again'))).rejects.toMatchObject({
      name: 'UpgradeNotAllowedError',
      message: expect.stringContaining(`environment ${seed.id}`),
    });
  });

  it('moves a node with one conditional write, refusing a move from where the node no longer is', async () => {
    const seed = await store.createSeed(draft(1, 'prod-8.0'));
    expect(await store.moveNode(11, 1, seed.id)).toEqual(site.environments[0]!.nodes[0]);
    await expect(store.moveNode(11, 1, seed.id)).rejects.toMatchObject({ name: 'StaleWriteError' });
    expect((await store.getEnvironment(seed.id))?.environment.nodes.map((n) => n.id)).toEqual([11]);
    expect((await store.getEnvironment(1))?.environment.nodes.map((n) => n.id)).toEqual([12, 13]);
    // Seeding again keeps the node where it moved.
    await store.seed(site);
    expect((await store.getNode(11))?.clusterId).toBe(seed.id);
  });

  it('registers releases and environments once: the same again is unchanged, other content or a held node a conflict naming it', async () => {
    expect(await store.addRelease(site.releases[0]!)).toBe('unchanged');
    expect(await store.addRelease({ ...site.releases[0]!, id: 7 })).toBe('created');
    await expect(store.addRelease({ ...site.releases[0]!, name: 'other' })).rejects.toMatchObject({
      name: 'ResourceConflictError',
      problems: [{ field: 'id' }],
    });

    // Re-registered after one of its nodes moved to its seed: unchanged, the node stays in the seed.
    const seed = await store.createSeed(draft(1, 'prod-8.0'));
    await store.moveNode(11, 1, seed.id);
    expect(await store.addEnvironment({ ...site.environments[0]!, status: 'update' })).toBe('unchanged');
    expect((await store.getNode(11))?.clusterId).toBe(seed.id);

    const node = { id: 21, name: 'node-21', roles: ['controller'], ip: '10.20.1.21', mac: '52:54:00:00:00:21' };
    await expect(
      store.addEnvironment({
        id: 8,
        name: 'new',
        release_id: 1,
        status: 'operational',
        attributes: { editable: {}, generated: {} },
        nodes: [node, { ...node, id: 81, name: 'node-81' }],
      }),
    ).rejects.toMatchObject({
      name: 'ResourceConflictError',
      problems: [{ field: 'nodes[0].id', message: 'node 21 belongs to environment 2' }],
    });
    // All or nothing: what it wrote was given back (no node, no environment), and its name is free.
    expect(await store.getNode(81)).toBeUndefined();
    expect(await store.getEnvironment(8)).toBeUndefined();
    expect(
      await store.addEnvironment({
        id: 8,
        name: 'new',
        release_id: 1,
        status: 'operational',
        attributes: { editable: {}, generated: {} },
        nodes: [{ ...node, id: 81, name: 'node-81' }],
      }),
    ).toBe('created');
    expect((await store.getNode(81))?.clusterId).toBe(8);
    // And new seeds take ids above it.
    expect((await store.createSeed(draft(3, 'idle-8.0'))).id).toBe(9);
  });

  it('refuses a replace at a stale revision, and never writes a node list', async () => {
    const stored = (await store.getEnvironment(1))!;
    await store.replaceEnvironment({ ...stored.environment, name: 'first' }, stored.revision);
    await expect(store.replaceEnvironment({ ...stored.environment, name: 'second' }, stored.revision)).rejects.toMatchObject({ name: 'StaleWriteError' });
    expect((await store.getEnvironment(1))?.environment).toMatchObject({ name: 'first', nodes: site.environments[0]!.nodes });
    const first = (await store.getEnvironment(1))!;
    await store.replaceEnvironment({ ...first.environment, nodes: [] }, first.revision);
    expect((await store.getEnvironment(1))?.environment.nodes).toEqual(site.environments[0]!.nodes);
  });
});
