import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbEnvironmentStore, SEED_CLAIM_LEASE_MS } from '../../adapters/dynamodb/dynamodb-environment-store';
import { createTableInput } from '../../adapters/dynamodb/table-design';
import { environmentSchema, type Environment } from '../../core/environments';
import { ResourceConflictError, UpgradeNotAllowedError } from '../../core/errors';
import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../local/local-dynamodb';
import { parseSiteDefinition } from '../../simulator';
import { call, startServedApi, type ApiReply } from '../support/api';
import { eventually } from '../support/embedded';
import { buildCloudSite, environmentUpgradeRequest, fuelEnvironments } from '../support/environments';
import { observeEnvironments, observeUpgrades } from '../support/fault-invariants';

/**
 * Environments are claimed atomically: names, site nodes and node ids are claim items written with
 * conditions, so of racing registrations, clones and upgrades exactly one wins, every time; a
 * registration that dies between its writes leaves claims that are taken over once their lease ran
 * out, never a half-registered environment; a delete gives them back. Each race is judged by the fault
 * matrix's checkers (observeEnvironments: a site node, node id or name in one environment at most;
 * observeUpgrades: no node rebooted more often than the finished upgrades over it account for).
 * Before: 4 concurrent registrations of one name created 3; 6 holding site node n03 all got 201; the
 * clone race made 4 seeds of one name.
 */
const ROUNDS = 4;
const SPARE_NODES = Array.from({ length: 12 }, (_, i) => `spare-${String(i).padStart(2, '0')}`);

const environment = (id: number, name: string, nodes: { id: number; name: string }[] = []) => ({
  id,
  name,
  release_id: 1,
  nodes: nodes.map((node, i) => ({
    ...node,
    roles: ['compute'],
    ip: `10.50.${id % 250}.${i + 1}`,
    mac: `52:54:00:50:${String(id % 100).padStart(2, '0')}:${String(i + 10).padStart(2, '0')}`,
  })),
});

describe('racing registrations, clones and upgrades over the REST API', () => {
  let served: Awaited<ReturnType<typeof startServedApi>>;
  let runtime: EmbeddedRuntime;
  const request = (method: string, path: string, body?: unknown) => call(runtime, served.apiEndpoint, method, path, body);
  let nextId = 100;
  /** `count` requests at once; their statuses sorted. */
  const race = async (count: number, send: (i: number) => Promise<ApiReply>) => {
    const replies = await Promise.all(Array.from({ length: count }, (_, i) => send(i)));
    return { replies, statuses: replies.map((r) => r.status).sort() };
  };

  beforeAll(async () => {
    const cloud = buildCloudSite();
    served = await startServedApi(parseSiteDefinition({ ...cloud, nodes: [...cloud.nodes, ...SPARE_NODES.map((name, i) => ({ name, nid: 500 + i }))] }));
    runtime = served.runtime;
  });
  afterAll(() => served.close());
  afterEach(async () => {
    expect(await observeEnvironments(runtime.environments)).toEqual([]);
  });

  it('of 4 registrations of one name, exactly one is created, every time', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { replies, statuses } = await race(4, () => request('POST', '/environments', environment(nextId++, `dup-${round}`)));
      expect(statuses).toEqual([201, 409, 409, 409]);
      for (const reply of replies.filter((r) => r.status === 409))
        expect(reply.body.errors).toEqual([
          { field: 'name', message: expect.stringMatching(new RegExp(`^environment \\d+ is named 'dup-${round}' already$`)) },
        ]);
    }
    expect((await request('GET', '/environments')).body.filter((env: { name: string }) => env.name.startsWith('dup-'))).toHaveLength(ROUNDS);
  });

  it('of 6 registrations each holding one site node, exactly one is created, every time', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const site = SPARE_NODES[round]!;
      const { replies, statuses } = await race(6, (i) => {
        const id = nextId++;
        return request('POST', '/environments', environment(id, `holds-${site}-${i}`, [{ id: 1000 + id, name: site }]));
      });
      expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
      for (const reply of replies.filter((r) => r.status === 409))
        expect(reply.body.errors).toEqual([{ field: 'nodes[0].name', message: expect.stringContaining(`'${site}' is node `) }]);
    }
  });

  it('of registrations holding one node id, or several site nodes in any order, exactly one is created', async () => {
    const sameId = await race(4, (i) => request('POST', '/environments', environment(nextId++, `same-id-${i}`, [{ id: 4242, name: SPARE_NODES[4 + i]! }])));
    expect(sameId.statuses).toEqual([201, 409, 409, 409]);
    // Overlapping sets given in different orders: claimed in name order, so one gets all of its nodes.
    const [a, b, c] = [SPARE_NODES[8]!, SPARE_NODES[9]!, SPARE_NODES[10]!];
    const sets = [
      [a, b],
      [b, c],
      [c, a],
      [b, a],
    ];
    const overlapping = await race(4, (i) =>
      request(
        'POST',
        '/environments',
        environment(
          nextId++,
          `overlap-${i}`,
          sets[i]!.map((name, k) => ({ id: 5000 + 10 * i + k, name })),
        ),
      ),
    );
    // Every two of the sets share a node: exactly one can be created, and one is.
    expect(overlapping.statuses).toEqual([201, 409, 409, 409]);
  });

  it('of clones of 4 environments to one name, exactly one seed is made, every time', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const originals: number[] = [];
      for (let i = 0; i < 4; i++) {
        const id = nextId++;
        expect((await request('POST', '/environments', environment(id, `original-${round}-${i}`))).status).toBe(201);
        originals.push(id);
      }
      const { replies, statuses } = await race(4, (i) =>
        request('POST', `/environments/${originals[i]}/upgrade/clone`, { name: `seed-${round}`, release_id: 2 }),
      );
      // Seeds draw their ids above every registered one: registrations here go above theirs.
      nextId += 10;
      expect(statuses).toEqual([200, 409, 409, 409]);
      for (const reply of replies.filter((r) => r.status === 409))
        expect(reply.body.errors).toEqual([{ field: 'name', message: expect.stringContaining(`is named 'seed-${round}' already`) }]);
      // The losers' originals can be cloned again under another name (their relation claim was given back).
      const loser = originals[replies.findIndex((r) => r.status === 409)]!;
      expect((await request('POST', `/environments/${loser}/upgrade/clone`, { name: `seed-${round}-again`, release_id: 2 })).status).toBe(200);
    }
  });

  it('of 4 upgrades of one environment, exactly one starts; it reboots each node once', async () => {
    const { replies, statuses } = await race(4, () => request('POST', '/environments/5/upgrade', environmentUpgradeRequest()));
    expect(statuses).toEqual([201, 409, 409, 409]);
    const id = replies.find((r) => r.status === 201)!.body.id as string;
    const report = await eventually(
      runtime,
      async () => {
        const got = await request('GET', `/sessions/${id}`);
        return ['COMPLETE', 'FAILED'].includes(got.body.progress?.phase) ? got.body : undefined;
      },
      'the environment upgrade to end',
      60_000,
    );
    expect(report.progress.phase).toBe('COMPLETE');
    const children = [report.rollingUpgrades.controllers.upgradeId, report.rollingUpgrades.nodes.upgradeId] as string[];
    expect(await observeUpgrades(runtime, children)).toEqual([]);
    expect(Object.values(runtime.simulator.state().nodes).filter((node) => node.bootCount > 1)).toEqual([]);
  });

  it('a delete gives the name and the nodes back (404 after); an environment whose upgrade has ended can be deleted', async () => {
    const id = nextId++;
    const site = SPARE_NODES[11]!;
    expect((await request('POST', '/environments', environment(id, 'to-delete', [{ id: 7000, name: site }]))).status).toBe(201);
    expect((await request('POST', '/environments', environment(nextId++, 'to-delete'))).status).toBe(409);
    expect((await request('DELETE', `/environments/${id}`)).body).toEqual({ id, removed: true });
    expect((await request('GET', `/environments/${id}`)).status).toBe(404);
    expect((await request('DELETE', `/environments/${id}`)).status).toBe(404);
    const again = nextId++;
    expect((await request('POST', '/environments', environment(again, 'to-delete', [{ id: 7000, name: site }]))).status).toBe(201);
    // An environment upgrade running over it (or its seed) holds it.
    expect((await request('DELETE', '/environments/5')).status).toBe(200);
  });
});

/** A client that dies (every call fails) once it has made `writes` successful writes: a process killed between two writes. */
function dyingClient(client: DynamoDBDocumentClient, writes: number) {
  let made = 0;
  const wrapped = Object.create(client) as DynamoDBDocumentClient;
  wrapped.send = (async (command: { constructor: { name: string } }) => {
    if (made >= writes) throw new Error('the process died');
    const result = await client.send(command as never);
    if (['PutCommand', 'UpdateCommand', 'DeleteCommand'].includes(command.constructor.name)) made++;
    return result;
  }) as DynamoDBDocumentClient['send'];
  return { client: wrapped, made: () => made };
}

describe('a registration, clone or delete that dies between its writes', () => {
  let db: LocalDynamoDb;
  beforeAll(async () => {
    db = await startLocalDynamoDb();
  });
  afterAll(() => db.close());

  const fresh = async (name: string) => {
    await db.rawClient.send(new CreateTableCommand(createTableInput(name)));
    let clock = 1_000_000;
    const store = (client: DynamoDBDocumentClient = db.client) => new DynamoDbEnvironmentStore({ tableName: name, client, now: () => clock });
    await store().seed(fuelEnvironments());
    return { store, later: () => (clock += SEED_CLAIM_LEASE_MS + 1) };
  };
  const env = (id: number, name: string, site: string): Environment =>
    environmentSchema.parse(
      environment(id, name, [
        { id: 900 + id, name: site },
        { id: 950 + id, name: `${site}-b` },
      ]),
    );
  const conflict = async (work: Promise<unknown>) => {
    try {
      await work;
      return undefined;
    } catch (err) {
      if (err instanceof ResourceConflictError) return err.problems.map((p) => p.field);
      throw err;
    }
  };

  it('leaves nothing half-registered after each of its writes: a rival waits out the lease, then takes the claims over', async () => {
    let cells = 0;
    for (let k = 1; ; k++) {
      const { store, later } = await fresh(`register-crash-${k}`);
      const dying = dyingClient(db.client, k);
      const died = await store(dying.client)
        .addEnvironment(env(10, 'crashed', 'site-x'))
        .then(
          () => false,
          () => true,
        );
      if (!died) break;
      cells++;
      expect(await observeEnvironments(store())).toEqual([]);
      if (await store().getEnvironment(10)) {
        // It died after its commit (raising the id counter): registered whole, and it holds what it claimed.
        expect((await store().getEnvironment(10))?.environment.nodes.map((n) => n.name)).toEqual(['site-x', 'site-x-b']);
        expect(await conflict(store().addEnvironment(env(11, 'crashed', 'site-x')))).toEqual(['name']);
        continue;
      }
      // Never seen half-registered: not listed at all until it committed.
      // Within the lease a rival for its name or site node is refused (it may still be registering) unless the crash came first.
      const early = await conflict(store().addEnvironment(env(11, 'crashed', 'site-x')));
      if (early === undefined) {
        expect(await store().getEnvironment(11)).toBeDefined();
        continue;
      }
      expect(early.every((field) => ['name', 'nodes[0].name', 'nodes[1].name'].includes(field))).toBe(true);
      // Past the lease, the rival takes the claims over; the crashed registration can never commit now.
      later();
      expect(await store().addEnvironment(env(11, 'crashed', 'site-x'))).toBe('created');
      expect((await store().getEnvironment(11))?.environment).toMatchObject({ name: 'crashed', nodes: [{ name: 'site-x' }, { name: 'site-x-b' }] });
      expect(await store().getEnvironment(10)).toBeUndefined();
      expect(await observeEnvironments(store())).toEqual([]);
    }
    expect(cells).toBeGreaterThanOrEqual(5);
  });

  it('a registration retried after it died completes it (same environment, past the lease)', async () => {
    const { store, later } = await fresh('register-retry');
    await store(dyingClient(db.client, 3).client)
      .addEnvironment(env(20, 'retried', 'site-y'))
      .catch(() => undefined);
    later();
    expect(await store().addEnvironment(env(20, 'retried', 'site-y'))).toBe('created');
    expect(await store().addEnvironment(env(20, 'retried', 'site-y'))).toBe('unchanged');
  });

  it('a clone that died after each of its writes leaves one seed of that name, linked: taken over past the lease, or completed', async () => {
    let cells = 0;
    for (let k = 1; ; k++) {
      const { store, later } = await fresh(`clone-crash-${k}`);
      const draft = { name: 'prod-8.0', release_id: 2, status: 'new' as const, attributes: { editable: {}, generated: {} }, nodes: [], original_cluster_id: 1 };
      const died = await store(dyingClient(db.client, k).client)
        .createSeed(draft)
        .then(
          () => false,
          () => true,
        );
      if (!died) break;
      cells++;
      later();
      const seedId = await store()
        .createSeed(draft)
        .then(
          (seed) => seed.id,
          async (err: unknown) => {
            // The dead clone had stored its seed: the relation is completed instead, and names it.
            expect(err).toBeInstanceOf(UpgradeNotAllowedError);
            return store().seedOf(1);
          },
        );
      const named = (await store().listEnvironments()).filter((e) => e.name === 'prod-8.0');
      expect(named.map((e) => e.id)).toEqual([seedId]);
      expect(await store().seedOf(1)).toBe(seedId);
      expect(await observeEnvironments(store())).toEqual([]);
    }
    expect(cells).toBeGreaterThanOrEqual(5);
  });

  it('a delete that died midway leaves the environment unlisted and its claims free; a delete again finishes it', async () => {
    for (let k = 1; k <= 5; k++) {
      const { store } = await fresh(`delete-crash-${k}`);
      expect(await store().addEnvironment(env(30, 'doomed', 'site-z'))).toBe('created');
      const died = await store(dyingClient(db.client, k).client)
        .deleteEnvironment(30)
        .then(
          () => false,
          () => true,
        );
      expect(await store().getEnvironment(30)).toBeUndefined();
      // Its name and nodes are free at once (no lease: a delete is not undone).
      expect(await store().addEnvironment(env(31, 'doomed', 'site-z'))).toBe('created');
      if (died) await store().deleteEnvironment(30);
      expect(await observeEnvironments(store())).toEqual([]);
      expect((await store().getEnvironment(31))?.environment.nodes.map((n) => n.name)).toEqual(['site-z', 'site-z-b']);
    }
  });
});
