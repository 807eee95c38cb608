import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbConnectorState } from '../../../adapters/dynamodb/dynamodb-connector-state';
import { DynamoDbSessionStore } from '../../../adapters/dynamodb/dynamodb-session-store';
import { ConnectorRecordMissingError } from '../../../adapters/errors';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../local/local-dynamodb';
import { makeSession } from '../../support/dynamodb';

let db: LocalDynamoDb;
let state: DynamoDbConnectorState;

beforeAll(async () => {
  db = await startLocalDynamoDb();
  state = new DynamoDbConnectorState({ tableName: db.tableName, client: db.client, clock: { now: () => 1_767_225_600_000 } });
});
afterAll(() => db.close());

interface Session {
  name: string;
  nodes: string[];
  requestedAt: number;
  note?: string;
}

describe('connector state on the rollout table', () => {
  it('keeps a record for another instance (another Lambda) to read, and creates it only once', async () => {
    const first = { name: 'rollout-u1-step-0', nodes: ['n1', 'n2'], requestedAt: 100 };
    expect(await state.records<Session>('slurm-reboot').create(first)).toEqual({ record: first, created: true });
    const other = new DynamoDbConnectorState({ tableName: db.tableName, client: db.client });
    expect(await other.records<Session>('slurm-reboot').get(first.name)).toEqual(first);
    // A retried request finds the first record, with its request time, and is told it did not write.
    expect(await other.records<Session>('slurm-reboot').create({ ...first, requestedAt: 999 })).toEqual({ record: first, created: false });
  });

  it('lets exactly one of 20 racing creates of one name win; every loser gets the winner', async () => {
    const records = state.records<Session>('slurm-reboot');
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => records.create({ name: 'race', nodes: [`n${i}`], requestedAt: i })));
    const winners = results.filter((r) => r.created);
    expect(winners).toHaveLength(1);
    for (const r of results) expect(r.record).toEqual(winners[0]!.record);
  });

  it('updates only a record that exists, dropping unset fields', async () => {
    const actions = state.records<Session>('command-provisioner');
    await expect(actions.update({ name: 'never-created', nodes: [], requestedAt: 0 })).rejects.toBeInstanceOf(ConnectorRecordMissingError);
    expect(await actions.get('never-created')).toBeUndefined();
    await actions.create({ name: 'a1', nodes: ['n1'], requestedAt: 1 });
    await actions.update({ name: 'a1', nodes: ['n1'], requestedAt: 1, note: 'done' });
    await actions.update({ name: 'a1', nodes: ['n1'], requestedAt: 2, note: undefined });
    expect(await actions.get('a1')).toEqual({ name: 'a1', nodes: ['n1'], requestedAt: 2 });
  });

  it('keeps each kind apart, and apart from sessions of the same name, with a TTL', async () => {
    const store = new DynamoDbSessionStore({ tableName: db.tableName, client: db.client });
    await store.createSession(makeSession({ upgradeId: 'same' }), ['n1']);
    await state.records<Session>('slurm-reboot').create({ name: 'same', nodes: ['boot'], requestedAt: 1 });
    await state.records<Session>('command-provisioner').create({ name: 'same', nodes: ['action'], requestedAt: 2 });
    expect((await state.records<Session>('slurm-reboot').get('same'))?.nodes).toEqual(['boot']);
    expect((await state.records<Session>('command-provisioner').get('same'))?.nodes).toEqual(['action']);
    expect((await store.getSession('same'))?.upgradeId).toBe('same');
    const { Items = [] } = await db.client.send(new ScanCommand({ TableName: db.tableName }));
    const connectorItems = Items.filter((item) => String(item.pk).startsWith('CONNECTOR#') && String(item.pk).endsWith('#same'));
    expect(connectorItems.map((item) => [item.pk, item.sk, item.expiresAt])).toEqual(
      expect.arrayContaining([
        ['CONNECTOR#slurm-reboot#same', 'CONNECTOR', 1_767_225_600 + 90 * 24 * 3600],
        ['CONNECTOR#command-provisioner#same', 'CONNECTOR', 1_767_225_600 + 90 * 24 * 3600],
      ]),
    );
    expect(connectorItems).toHaveLength(2);
  });
});
