import { createApi, type ApiControlPlane } from '../../api';
import { DynamoDbEnvironmentStore } from '../../adapters/dynamodb/dynamodb-environment-store';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../engine/local-dynamodb';
import type { EnvironmentStore } from '../../ports/environment-store';
import { fuelEnvironments } from '../support/environments';

const noControlPlane = {} as ApiControlPlane;

describe('assign when the original changes between the read and the write', () => {
  let db: LocalDynamoDb;
  beforeAll(async () => {
    db = await startLocalDynamoDb();
  });
  afterAll(() => db.close());

  it('answers 409 and leaves the node in the original only (the seed write is undone)', async () => {
    const store = new DynamoDbEnvironmentStore({ tableName: db.tableName, client: db.client });
    await store.seed(fuelEnvironments());
    const api = createApi({ controlPlane: noControlPlane, environments: store });
    const seed = (await api({ method: 'POST', path: '/environments/1/upgrade/clone', body: JSON.stringify({ name: 'prod-8.0', release_id: 2 }) })).body as { id: number };

    // A concurrent writer renames the original right after the API has read it.
    const racing: EnvironmentStore = Object.create(store) as EnvironmentStore;
    racing.getEnvironment = async (id) => {
      const read = await store.getEnvironment(id);
      if (id === 1 && read) await store.replaceEnvironment({ ...read.environment, name: 'prod (renamed)' }, read.revision);
      return read;
    };
    const reply = await createApi({ controlPlane: noControlPlane, environments: racing })({
      method: 'POST',
      path: `/environments/${seed.id}/upgrade/assign`,
      body: JSON.stringify({ node_id: 11 }),
    });
    expect(reply).toMatchObject({ status: 409, body: { detail: expect.stringContaining('environment 1') } });
    expect((await store.getEnvironment(seed.id))?.environment.nodes).toEqual([]);
    expect((await store.getEnvironment(1))?.environment).toMatchObject({ name: 'prod (renamed)', nodes: [{ id: 11 }, { id: 12 }, { id: 13 }] });

    // Asked again, it goes through.
    expect((await api({ method: 'POST', path: `/environments/${seed.id}/upgrade/assign`, body: JSON.stringify({ node_id: 11 }) })).status).toBe(200);
  });
});
