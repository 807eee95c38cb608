import { SFNClient } from '@aws-sdk/client-sfn';
import { WORKFLOWS } from '../../contracts';
import type { ControlPlane } from '../../control-plane/control-plane';
import { deployedControlPlane } from '../../control-plane/deployed-control-plane';
import type { SessionKind } from '../../control-plane/runtime';
import { connectDynamoDb, countRequests, type RequestCounter } from '../../local/local-dynamodb';
import { localStateMachineArn } from '../../local/local-step-functions';
import { startServedControlPlane, type ServedControlPlane } from '../../local/serve';
import { makeDeploymentRecord, makeSession, makeTaskRunRecord } from '../support/dynamodb';
import { buildSite } from '../support/sites';

/**
 * What each operation of the control plane costs in DynamoDB requests: the run's record is read once,
 * in one request whatever its kind (one BatchGetItem of the three keys its id gives), before the one
 * write. Counted on the embedded control plane in process (its in-process client) and on a control
 * plane over the SDK (the deployed construction: the real DynamoDB client over HTTP to the same store,
 * Step Functions through its SDK client), on runs whose records are written directly: no execution runs
 * them, so no workflow's request is counted with the operation's.
 */

interface Side {
  controlPlane: ControlPlane;
  requests: RequestCounter;
}

let served: ServedControlPlane;
let sides: Record<'in process' | 'through the SDK', Side>;
let closeSdkSide: () => Promise<void>;

beforeAll(async () => {
  served = await startServedControlPlane({ site: { kind: 'simulated', definition: buildSite(2) } });
  const { endpoints, runtime } = served;
  const dynamoDb = connectDynamoDb({ endpoint: endpoints.dynamodbEndpoint, tableName: endpoints.tableName });
  const sfn = new SFNClient({
    endpoint: endpoints.stepFunctionsEndpoint,
    region: endpoints.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const overSdk = deployedControlPlane({
    tableName: endpoints.tableName,
    client: dynamoDb.client,
    stateMachines: {
      rollingUpgrade: runtime.stateMachineArns[WORKFLOWS.rollingUpgrade],
      groupDeployment: runtime.stateMachineArns[WORKFLOWS.groupDeployment],
      taskGraph: runtime.stateMachineArns[WORKFLOWS.taskGraph],
      environmentUpgrade: localStateMachineArn('EnvironmentUpgrade'),
    },
    sfn,
  });
  sides = {
    'in process': { controlPlane: runtime, requests: runtime.dynamoDbRequests },
    'through the SDK': { controlPlane: overSdk, requests: countRequests(dynamoDb.rawClient) },
  };
  closeSdkSide = async () => {
    await overSdk.close();
    sfn.destroy();
    await dynamoDb.close();
  };
});
afterAll(async () => {
  await closeSdkSide();
  await served.close();
});

/** The DynamoDB commands `act` sent through the side's client, by name (its error, if any, is the act's outcome). */
async function sent({ requests }: Side, act: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = requests.byCommand();
  await act().catch(() => undefined);
  const after = requests.byCommand();
  return Object.fromEntries(Object.entries(after).flatMap(([name, n]) => (n > (before[name] ?? 0) ? [[name, n - (before[name] ?? 0)]] : [])));
}

/** A run of `kind` that an operator may stop, then cancel: UPDATING, RUNNING, RUNNING. */
async function runningRun(kind: SessionKind, id: string): Promise<void> {
  const { runtime } = served;
  if (kind === 'upgrade') await runtime.store.createSession(makeSession({ upgradeId: id, mode: 'window' }), []);
  if (kind === 'deployment') await runtime.deployments.createDeployment(makeDeploymentRecord(id, 'RUNNING'), { groups: [] } as never);
  if (kind === 'tasks') await runtime.taskRuns.createRun(makeTaskRunRecord(id, 'RUNNING'), {} as never, []);
}

const ONE_READ = { BatchGetItemCommand: 1 };
const ONE_READ_ONE_WRITE = { BatchGetItemCommand: 1, UpdateItemCommand: 1 };
const KINDS: readonly SessionKind[] = ['upgrade', 'deployment', 'tasks'];

describe.each(['in process', 'through the SDK'] as const)('DynamoDB requests per operation, %s', (sideName) => {
  it.each(KINDS)('a stop and a cancel of a %s: one read of its record, then its one write', async (kind) => {
    const side = sides[sideName];
    const id = `reads-${sideName.replace(/ /g, '-')}-${kind}`;
    await runningRun(kind, id);
    expect(await sent(side, () => side.controlPlane.stop(id))).toEqual(ONE_READ_ONE_WRITE);
    expect(await side.controlPlane.status(id)).toMatchObject({ kind, state: 'STOPPING' });
    expect(await sent(side, () => side.controlPlane.cancel(id))).toEqual(ONE_READ_ONE_WRITE);
    expect(await side.controlPlane.status(id)).toMatchObject({ kind, state: kind === 'upgrade' ? 'DELETING' : 'CANCELLING' });
    // A refused request reads the record once too: the conditional write says why it refused.
    expect(await sent(side, () => side.controlPlane.stop(id))).toEqual(ONE_READ_ONE_WRITE);
    expect(await sent(side, () => side.controlPlane.status(id))).toEqual(ONE_READ);
  });

  it("the gate of an upgrade in mode window: one read, then the gate's one write", async () => {
    const side = sides[sideName];
    const id = `reads-${sideName.replace(/ /g, '-')}-gate`;
    await runningRun('upgrade', id);
    // The session's first gate finds no operator map (no park, no gate wrote it yet): the refused write, the map, then the gate.
    expect(await sent(side, () => side.controlPlane.gate(id, 'pause'))).toEqual({ BatchGetItemCommand: 1, UpdateItemCommand: 3 });
    expect(await side.controlPlane.session(id)).toMatchObject({ report: { paused: true } });
    expect(await sent(side, () => side.controlPlane.gate(id, 'unpause'))).toEqual(ONE_READ_ONE_WRITE);
    expect(await sent(side, () => side.controlPlane.gate(id, 'pause'))).toEqual(ONE_READ_ONE_WRITE);
  });

  it('an unknown id: one read and no write; an id no run can have: no request at all', async () => {
    const side = sides[sideName];
    for (const operation of [
      (id: string) => side.controlPlane.stop(id),
      (id: string) => side.controlPlane.cancel(id),
      (id: string) => side.controlPlane.status(id),
    ]) {
      expect(await sent(side, () => operation('reads-nobody'))).toEqual(ONE_READ);
      expect(await sent(side, () => operation('x'.repeat(201)))).toEqual({});
    }
  });
});
