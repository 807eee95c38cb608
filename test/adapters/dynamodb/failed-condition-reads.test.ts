import { DynamoDbConnectorState } from '../../../adapters/dynamodb/dynamodb-connector-state';
import { DynamoDbDeploymentStore } from '../../../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbEnvironmentUpgradeStore } from '../../../adapters/dynamodb/dynamodb-environment-upgrade-store';
import { DynamoDbSessionStore } from '../../../adapters/dynamodb/dynamodb-session-store';
import { DynamoDbTaskRunStore } from '../../../adapters/dynamodb/dynamodb-task-run-store';
import {
  DeploymentNotFoundError,
  SessionNotCancellableError,
  SessionNotFoundError,
  SessionNotStoppableError,
  TaskRunNotFoundError,
} from '../../../core/errors';
import { connectDynamoDb, countRequests, startLocalDynamoDb, type LocalDynamoDb, type RequestCounter } from '../../../local/local-dynamodb';
import { ENVIRONMENT_UPGRADE_KIND, type EnvironmentUpgradeSession } from '../../../core/environments';
import { makeDeploymentRecord, makeSession, makeTaskRunRecord } from '../../support/dynamodb';

/**
 * A refused conditional write says why in the same call (ReturnValuesOnConditionCheckFailure): a failed
 * lock acquire or renew, a refused cancel, stop or removal, a create that finds the first one, send
 * their one write and read nothing after it, over the wire as a Lambda's SDK client would.
 */
let db: LocalDynamoDb;
let conn: LocalDynamoDb;
let sessions: DynamoDbSessionStore;
let deployments: DynamoDbDeploymentStore;
let taskRuns: DynamoDbTaskRunStore;

beforeAll(async () => {
  db = await startLocalDynamoDb();
  conn = connectDynamoDb({ endpoint: db.endpoint, tableName: db.tableName });
  sessions = new DynamoDbSessionStore({ tableName: conn.tableName, client: conn.client });
  deployments = new DynamoDbDeploymentStore({ tableName: conn.tableName, client: conn.client });
  taskRuns = new DynamoDbTaskRunStore({ tableName: conn.tableName, client: conn.client });
});
afterAll(async () => {
  await conn.close();
  await db.close();
});

/** The commands `act` sent, by name. */
async function commandsOf(act: () => Promise<unknown>): Promise<{ sent: Record<string, number>; outcome: unknown }> {
  const counter: RequestCounter = countRequests(conn.rawClient);
  const outcome = await act().catch((err: unknown) => err);
  return { sent: counter.byCommand(), outcome };
}

const ONE_UPDATE = { UpdateItemCommand: 1 };
const ONE_DELETE = { DeleteItemCommand: 1 };

describe('node locks', () => {
  it('a failed acquire learns its holder from the failed write itself', async () => {
    await sessions.locks.tryLockNodes('holder', ['n-held']);
    const { sent, outcome } = await commandsOf(() => sessions.locks.tryLockNodes('other', ['n-held']));
    expect(outcome).toEqual(new Map([['n-held', 'holder']]));
    expect(sent).toEqual(ONE_UPDATE);
  });

  it('a failed renew returns the lock that replaced it from the failed write itself', async () => {
    await sessions.locks.tryLockNodes('first', ['n-renew'], 0);
    await sessions.locks.tryLockNodes('second', ['n-renew']);
    const { sent, outcome } = await commandsOf(() => sessions.locks.renewNodeLocks('first', new Map([['n-renew', 1]])));
    expect(outcome).toEqual(new Map([['n-renew', expect.objectContaining({ owner: 'second', fencingToken: 2 })]]));
    expect(sent).toEqual(ONE_UPDATE);
  });
});

describe('upgrade sessions', () => {
  it('a refused cancel, stop and removal name the state the failed write saw, with no read', async () => {
    const ended = makeSession({ upgradeId: 'reads-ready', state: 'READY' });
    await sessions.createSession(ended, []);
    const cancel = await commandsOf(() => sessions.requestCancel(ended.upgradeId));
    expect(cancel.outcome).toEqual(new SessionNotCancellableError(ended.upgradeId, 'READY'));
    expect(cancel.sent).toEqual(ONE_UPDATE);
    const stop = await commandsOf(() => sessions.requestStop(ended.upgradeId));
    expect(stop.outcome).toEqual(new SessionNotStoppableError(ended.upgradeId, 'READY'));
    expect(stop.sent).toEqual(ONE_UPDATE);

    const running = makeSession({ upgradeId: 'reads-updating', state: 'UPDATING' });
    await sessions.createSession(running, []);
    const remove = await commandsOf(() => sessions.removeEnded(running.upgradeId));
    expect(remove.outcome).toEqual(new SessionNotCancellableError(running.upgradeId, 'UPDATING (it has not ended: cancel it first)'));
    expect(remove.sent).toEqual(ONE_DELETE);
  });

  it('an unknown id is not found from the failed write alone', async () => {
    const { sent, outcome } = await commandsOf(() => sessions.requestCancel('reads-nobody'));
    expect(outcome).toBeInstanceOf(SessionNotFoundError);
    expect(sent).toEqual(ONE_UPDATE);
  });
});

describe('deployments', () => {
  it('a refused cancel, stop and removal, and a resume of one that is not stopped, read nothing', async () => {
    await deployments.createDeployment(makeDeploymentRecord('reads-d-done', 'SUCCEEDED'), { groups: [] } as never);
    const cancel = await commandsOf(() => deployments.requestCancel('reads-d-done'));
    expect(cancel.outcome).toEqual(new SessionNotCancellableError('reads-d-done', 'SUCCEEDED'));
    expect(cancel.sent).toEqual(ONE_UPDATE);
    const stop = await commandsOf(() => deployments.requestStop('reads-d-done'));
    expect(stop.outcome).toEqual(new SessionNotStoppableError('reads-d-done', 'SUCCEEDED'));
    expect(stop.sent).toEqual(ONE_UPDATE);
    const resume = await commandsOf(() => deployments.reopenStopped('reads-d-done'));
    expect(resume.outcome).toMatchObject({ deploymentId: 'reads-d-done', status: 'SUCCEEDED' });
    expect(resume.sent).toEqual(ONE_UPDATE);

    await deployments.createDeployment(makeDeploymentRecord('reads-d-running', 'RUNNING'), { groups: [] } as never);
    const remove = await commandsOf(() => deployments.removeEnded('reads-d-running'));
    expect(remove.outcome).toEqual(new SessionNotCancellableError('reads-d-running', 'RUNNING (it has not ended: cancel it first)'));
    expect(remove.sent).toEqual(ONE_DELETE);
    const unknown = await commandsOf(() => deployments.requestStop('reads-d-nobody'));
    expect(unknown.outcome).toBeInstanceOf(DeploymentNotFoundError);
    expect(unknown.sent).toEqual(ONE_UPDATE);
  });
});

describe('task runs', () => {
  it('a refused cancel and stop, a group deploy phase, and a resume of one that is not stopped, read nothing', async () => {
    await taskRuns.createRun(makeTaskRunRecord('reads-t-done', 'FAILED'), {} as never, []);
    const cancel = await commandsOf(() => taskRuns.requestCancel('reads-t-done'));
    expect(cancel.outcome).toEqual(new SessionNotCancellableError('reads-t-done', 'FAILED'));
    expect(cancel.sent).toEqual(ONE_UPDATE);
    const resume = await commandsOf(() => taskRuns.reopenStopped('reads-t-done'));
    expect(resume.outcome).toMatchObject({ runId: 'reads-t-done', status: 'FAILED' });
    expect(resume.sent).toEqual(ONE_UPDATE);

    await taskRuns.createRun(makeTaskRunRecord('reads-t-phase', 'RUNNING', 'reads-d'), {} as never, []);
    const stop = await commandsOf(() => taskRuns.requestStop('reads-t-phase'));
    expect(stop.outcome).toEqual(new SessionNotStoppableError('reads-t-phase', 'the deploy phase of deployment reads-d (stop the deployment)'));
    expect(stop.sent).toEqual(ONE_UPDATE);
    const unknown = await commandsOf(() => taskRuns.requestCancel('reads-t-nobody'));
    expect(unknown.outcome).toBeInstanceOf(TaskRunNotFoundError);
    expect(unknown.sent).toEqual(ONE_UPDATE);
  });
});

describe('creates that find the first one', () => {
  it('a second create of an environment upgrade and of a connector record returns the first from the failed write', async () => {
    const upgrades = new DynamoDbEnvironmentUpgradeStore({ tableName: conn.tableName, client: conn.client });
    const first: EnvironmentUpgradeSession = {
      upgradeId: 'reads-env-up',
      kind: ENVIRONMENT_UPGRADE_KIND,
      environmentId: 5,
      state: 'UPDATING',
      completed: false,
      createdAt: '2025-01-01T00:00:00.000Z',
      progress: { phase: 'CLONING', phaseStartedAt: 0, errorCount: 0 },
      messages: [],
    };
    await upgrades.createUpgrade(first);
    const again = await commandsOf(() => upgrades.createUpgrade({ ...first, messages: ['other'] }));
    expect(again.outcome).toEqual({ session: first, revision: 0 });
    expect(again.sent).toEqual({ PutItemCommand: 1 });

    const records = new DynamoDbConnectorState({ tableName: conn.tableName, client: conn.client }).records<{ name: string; at: number }>('slurm-reboot');
    await records.create({ name: 'reads-boot', at: 1 });
    const retried = await commandsOf(() => records.create({ name: 'reads-boot', at: 2 }));
    expect(retried.outcome).toEqual({ record: { name: 'reads-boot', at: 1 }, created: false });
    expect(retried.sent).toEqual({ PutItemCommand: 1 });
  });
});
