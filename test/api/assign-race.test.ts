import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createTableInput } from '../../adapters/dynamodb/table-design';
import { createApi, type ApiControlPlane, type ApiHandler } from '../../api';
import { DynamoDbEnvironmentStore } from '../../adapters/dynamodb/dynamodb-environment-store';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../local/local-dynamodb';
import type { EnvironmentUpgradeStore } from '../../ports/environment-upgrade-store';
import type { RunStartStore } from '../../ports/run-start-store';
import { fuelEnvironments } from '../support/environments';

const noControlPlane = {} as ApiControlPlane;
const noUpgrades = {} as EnvironmentUpgradeStore;
const noStarts = {} as RunStartStore;
const WRITES = new Set(['PutCommand', 'UpdateCommand', 'DeleteCommand']);
const DECLARED_NODES = fuelEnvironments().environments.flatMap((env) => env.nodes.map((node) => node.id));

/** Where each declared node is: the ids of every environment whose node list holds it (once per occurrence). */
async function holders(store: DynamoDbEnvironmentStore): Promise<Record<number, number[]>> {
  const found: Record<number, number[]> = Object.fromEntries(DECLARED_NODES.map((id) => [id, []]));
  for (const env of await store.listEnvironments()) for (const node of env.nodes) (found[node.id] ??= []).push(env.id);
  return found;
}

/** Each declared node in exactly one environment. */
function expectEachNodeOnce(found: Record<number, number[]>): void {
  for (const [node, envs] of Object.entries(found)) expect({ node, envs }).toEqual({ node, envs: [expect.any(Number)] });
}

/** A client that, after its `pauseAfter`-th successful write, awaits `atPause` before answering. */
function pausingClient(client: DynamoDBDocumentClient, pauseAfter: number, atPause: () => Promise<void>) {
  let writes = 0;
  const wrapped = Object.create(client) as DynamoDBDocumentClient;
  wrapped.send = (async (command: { constructor: { name: string } }) => {
    const result = await client.send(command as never);
    if (WRITES.has(command.constructor.name) && ++writes === pauseAfter) await atPause();
    return result;
  }) as DynamoDBDocumentClient['send'];
  return { client: wrapped, writes: () => writes };
}

/** The fuel environments in `store`, an API over it, and the upgrade seed it cloned from environment 1. */
async function seededUpgrade(store: DynamoDbEnvironmentStore): Promise<{ api: ApiHandler; seed: { id: number } }> {
  await store.seed(fuelEnvironments());
  const api = createApi({ controlPlane: noControlPlane, environmentUpgrades: noUpgrades, runStarts: noStarts, environments: store });
  const cloned = await api({
    method: 'POST',
    path: '/environments/1/upgrade/clone',
    body: JSON.stringify({ name: 'prod-8.0', release_id: 2 }),
    contentType: 'application/json',
  });
  return { api, seed: cloned.body as { id: number } };
}

const assign = (api: ApiHandler, seedId: number, nodeId: number) =>
  api({ method: 'POST', path: `/environments/${seedId}/upgrade/assign`, body: JSON.stringify({ node_id: nodeId }), contentType: 'application/json' });

describe('concurrent assigns to one upgrade seed', () => {
  let db: LocalDynamoDb;
  beforeEach(async () => {
    db = await startLocalDynamoDb();
  });
  afterEach(() => db.close());

  /**
   * Assign A (node 11) stops after its k-th write, for every k it makes: there, each node must be in
   * exactly one environment; then assign B (node 12) runs in full, and A goes on. Both must succeed,
   * each node once. The old design (seed written, then the original, with an undo) left node 11 in
   * both environments at its first write and, with B in between, in both for good.
   */
  it('keeps every node in exactly one environment at every write of one assign while another runs', async () => {
    let interleaved = 0;
    for (let k = 1; ; k++) {
      const store = new DynamoDbEnvironmentStore({ tableName: `race-${k}`, client: db.client });
      await db.rawClient.send(new CreateTableCommand(createTableInput(`race-${k}`)));
      const { api: plain, seed } = await seededUpgrade(store);

      let b: Awaited<ReturnType<ApiHandler>> | undefined;
      let atPause: Record<number, number[]> = {};
      const paused = pausingClient(db.client, k, async () => {
        atPause = await holders(store);
        b = await assign(plain, seed.id, 12);
      });
      const a = await assign(
        createApi({
          controlPlane: noControlPlane,
          environmentUpgrades: noUpgrades,
          runStarts: noStarts,
          environments: new DynamoDbEnvironmentStore({ tableName: `race-${k}`, client: paused.client }),
        }),
        seed.id,
        11,
      );
      if (paused.writes() < k) break;
      interleaved++;

      expectEachNodeOnce(atPause);
      expect({ a: a.status, b: b?.status }).toEqual({ a: 200, b: 200 });
      expectEachNodeOnce(await holders(store));
      expect(await holders(store)).toMatchObject({ 11: [seed.id], 12: [seed.id], 13: [1] });
      // Asked again, A is refused (the node is in the seed already) and nothing is duplicated.
      expect((await assign(plain, seed.id, 11)).status).toBe(405);
      expectEachNodeOnce(await holders(store));
    }
    expect(interleaved).toBeGreaterThan(0);
  });

  it('lets exactly one of concurrent assigns of one node win, and the seed holds it once', async () => {
    const store = new DynamoDbEnvironmentStore({ tableName: db.tableName, client: db.client });
    const { api, seed } = await seededUpgrade(store);

    const replies = await Promise.all([11, 11, 11, 11, 12, 12, 12, 12].map((node) => assign(api, seed.id, node)));
    const statuses = (node: number) =>
      replies
        .filter((_, i) => [11, 11, 11, 11, 12, 12, 12, 12][i] === node)
        .map((r) => r.status)
        .sort();
    expect(statuses(11)).toEqual([200, 405, 405, 405]);
    expect(statuses(12)).toEqual([200, 405, 405, 405]);
    expectEachNodeOnce(await holders(store));
    expect((await store.getEnvironment(seed.id))?.environment.nodes.map((n) => n.id).sort()).toEqual([11, 12]);
  });

  it('is not disturbed by a concurrent change to the original environment', async () => {
    const store = new DynamoDbEnvironmentStore({ tableName: db.tableName, client: db.client });
    const { seed } = await seededUpgrade(store);
    const paused = pausingClient(db.client, 1, async () => {
      const read = (await store.getEnvironment(1))!;
      await store.replaceEnvironment({ ...read.environment, name: 'prod (renamed)' }, read.revision);
    });
    // The first write of a clone-free store is the assign's own: the rename lands right after it.
    const reply = await assign(
      createApi({
        controlPlane: noControlPlane,
        environmentUpgrades: noUpgrades,
        runStarts: noStarts,
        environments: new DynamoDbEnvironmentStore({ tableName: db.tableName, client: paused.client }),
      }),
      seed.id,
      11,
    );
    expect(reply.status).toBe(200);
    expectEachNodeOnce(await holders(store));
    expect((await store.getEnvironment(1))?.environment).toMatchObject({ name: 'prod (renamed)', nodes: [{ id: 12 }, { id: 13 }] });
  });
});
