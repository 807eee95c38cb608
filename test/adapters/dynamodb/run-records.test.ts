import type { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbDeploymentStore } from '../../../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbRunRecords } from '../../../adapters/dynamodb/dynamodb-run-records';
import { DynamoDbSessionStore } from '../../../adapters/dynamodb/dynamodb-session-store';
import { DynamoDbTaskRunStore } from '../../../adapters/dynamodb/dynamodb-task-run-store';
import { sessionKey } from '../../../adapters/dynamodb/table-design';
import { countRequests, startLocalDynamoDb, type LocalDynamoDb, type RequestCounter } from '../../../local/local-dynamodb';
import { makeDeploymentRecord, makeSession, makeTaskRunRecord } from '../../support/dynamodb';

/**
 * One lookup of a run id, whatever its kind: one BatchGetItem of the three keys the id gives, each
 * item read as its own store reads it (the record equals what getSession, getDeployment, getRun return).
 */
let db: LocalDynamoDb;
let sessions: DynamoDbSessionStore;
let deployments: DynamoDbDeploymentStore;
let taskRuns: DynamoDbTaskRunStore;
let records: DynamoDbRunRecords;
let requests: RequestCounter;

beforeAll(async () => {
  db = await startLocalDynamoDb();
  const table = { tableName: db.tableName, client: db.client };
  sessions = new DynamoDbSessionStore(table);
  deployments = new DynamoDbDeploymentStore(table);
  taskRuns = new DynamoDbTaskRunStore(table);
  records = new DynamoDbRunRecords(table);
  requests = countRequests(db.rawClient);
});
afterAll(() => db.close());

/** What `find` answers, and the commands it sent. */
async function found(id: string) {
  const before = requests.byCommand();
  const run = await records.find(id);
  const after = requests.byCommand();
  const sent = Object.fromEntries(Object.entries(after).flatMap(([name, n]) => (n > (before[name] ?? 0) ? [[name, n - (before[name] ?? 0)]] : [])));
  return { run, sent };
}

const ONE_BATCH_GET = { BatchGetItemCommand: 1 };

describe('DynamoDbRunRecords.find', () => {
  it('resolves an upgrade, a deployment and a task run to its kind and record in one BatchGetItem', async () => {
    const session = makeSession({ upgradeId: 'find-upgrade' });
    await sessions.createSession(session, []);
    await deployments.createDeployment(makeDeploymentRecord('find-deployment', 'RUNNING'), { groups: [] } as never);
    await taskRuns.createRun(makeTaskRunRecord('find-tasks', 'STOPPING'), {} as never, []);

    expect(await found('find-upgrade')).toEqual({ run: { kind: 'upgrade', record: await sessions.getSession('find-upgrade') }, sent: ONE_BATCH_GET });
    expect((await found('find-upgrade')).run?.record).toEqual(session);
    expect(await found('find-deployment')).toEqual({
      run: { kind: 'deployment', record: await deployments.getDeployment('find-deployment') },
      sent: ONE_BATCH_GET,
    });
    expect(await found('find-tasks')).toEqual({ run: { kind: 'tasks', record: await taskRuns.getRun('find-tasks') }, sent: ONE_BATCH_GET });
  });

  it('answers undefined for an id no run has, in the same one request', async () => {
    expect(await found('find-nobody')).toEqual({ run: undefined, sent: ONE_BATCH_GET });
  });

  it('prefers an upgrade, then a deployment, should two kinds ever share an id (ids hash their own workflow: they cannot)', async () => {
    await deployments.createDeployment(makeDeploymentRecord('find-shared', 'RUNNING'), { groups: [] } as never);
    await taskRuns.createRun(makeTaskRunRecord('find-shared', 'RUNNING'), {} as never, []);
    expect((await found('find-shared')).run?.kind).toBe('deployment');
    await sessions.createSession(makeSession({ upgradeId: 'find-shared' }), []);
    expect((await found('find-shared')).run?.kind).toBe('upgrade');
  });

  it('asks again for the keys DynamoDB left unprocessed (throttled), and finds the record then', async () => {
    const session = makeSession({ upgradeId: 'find-throttled' });
    const item = { ...session, ...sessionKey(session.upgradeId) };
    const asked: number[] = [];
    const send = jest.fn(async (command: BatchGetCommand) => {
      const { Keys } = command.input.RequestItems!['t']!;
      asked.push(Keys!.length);
      // All three keys unprocessed at first, as a throttled BatchGetItem may answer; then only the session exists.
      if (asked.length === 1) return { Responses: { t: [] }, UnprocessedKeys: { t: { Keys } } };
      return { Responses: { t: Keys!.some((key) => key['pk'] === item.pk && key['sk'] === item.sk) ? [item] : [] } };
    });
    const throttled = new DynamoDbRunRecords({ tableName: 't', client: { send } as unknown as DynamoDBDocumentClient });
    expect(await throttled.find(session.upgradeId)).toEqual({ kind: 'upgrade', record: session });
    expect(asked).toEqual([3, 3]);
  });
});
