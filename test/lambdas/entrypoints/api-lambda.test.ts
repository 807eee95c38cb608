import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@aws-lambda-powertools/logger';
import { SFNClient } from '@aws-sdk/client-sfn';
import { createApi } from '../../../api';
import { DynamoDbEnvironmentStore } from '../../../adapters/dynamodb/dynamodb-environment-store';
import { DynamoDbEnvironmentUpgradeStore } from '../../../adapters/dynamodb/dynamodb-environment-upgrade-store';
import { DynamoDbRunStartStore } from '../../../adapters/dynamodb/dynamodb-run-start-store';
import { ENVIRONMENT } from '../../../contracts';
import { MASKED_VALUE } from '../../../core/environments';
import { idForExecution } from '../../../core/execution-id';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../local/local-dynamodb';
import * as apiEntry from '../../../lambdas/entrypoints/api';
import { deployedControlPlaneFromEnvironment, toLambdaHandler, type ApiGatewayProxyEvent } from '../../../lambdas/entrypoints/api';
import { buildCloudSite, environmentUpgradeRequest, fuelEnvironments } from '../../support/environments';
import { upgradeRequest } from '../../support/sites';

const ROLLING_UPGRADE_ARN = 'arn:aws:states:us-east-1:123456789012:stateMachine:BaremetalRollout-RollingUpgrade';
const ENVIRONMENT_UPGRADE_ARN = ROLLING_UPGRADE_ARN.replace('RollingUpgrade', 'EnvironmentUpgrade');
const credentials = { accessKeyId: 'x', secretAccessKey: 'y' };

// The deployed API: the same routes behind API Gateway's proxy event, over the table and Step Functions
// (a stand-in that answers StartExecution over its real JSON protocol and records what it was asked).
describe('the API Lambda', () => {
  let db: LocalDynamoDb;
  let sfnServer: Server;
  const started: { target: string | undefined; body: Record<string, unknown> }[] = [];
  let handlerApi: ReturnType<typeof createApi> | undefined;
  let handler: (event: ApiGatewayProxyEvent) => Promise<{ statusCode: number; headers: Record<string, string>; body: string }>;
  const saved = { ...process.env };

  beforeAll(async () => {
    db = await startLocalDynamoDb();
    await new DynamoDbEnvironmentStore({ tableName: db.tableName, client: db.client }).seed(fuelEnvironments());
    sfnServer = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      req.on('end', () => {
        const body = JSON.parse(text) as Record<string, unknown>;
        started.push({ target: req.headers['x-amz-target'] as string | undefined, body });
        const arn = `${String(body['stateMachineArn']).replace(':stateMachine:', ':execution:')}:${String(body['name'])}`;
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify({ executionArn: arn, startDate: 1_700_000_000 }));
      });
    });
    await new Promise<void>((resolve) => sfnServer.listen(0, '127.0.0.1', resolve));
    // The function's DynamoDB client takes its endpoint and credentials from the environment, as on Lambda.
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    });
    const env = {
      [ENVIRONMENT.tableName]: db.tableName,
      [ENVIRONMENT.rollingUpgradeStateMachineArn]: ROLLING_UPGRADE_ARN,
      [ENVIRONMENT.groupDeploymentStateMachineArn]: ROLLING_UPGRADE_ARN.replace('RollingUpgrade', 'GroupDeployment'),
      [ENVIRONMENT.environmentUpgradeStateMachineArn]: ENVIRONMENT_UPGRADE_ARN,
    };
    const sfn = new SFNClient({ endpoint: `http://127.0.0.1:${(sfnServer.address() as AddressInfo).port}`, region: 'us-east-1', credentials });
    const environments = new DynamoDbEnvironmentStore({ tableName: db.tableName, client: db.client });
    const environmentUpgrades = new DynamoDbEnvironmentUpgradeStore({ tableName: db.tableName, client: db.client });
    const runStarts = new DynamoDbRunStartStore({ tableName: db.tableName, client: db.client });
    const api = createApi({ controlPlane: deployedControlPlaneFromEnvironment(env, sfn), environments, environmentUpgrades, runStarts });
    handlerApi = api;
    handler = toLambdaHandler(() => api);
  });
  afterAll(async () => {
    process.env = saved;
    await new Promise<void>((resolve) => sfnServer.close(() => resolve()));
    await db.close();
  });

  const event = (httpMethod: string, path: string, body?: unknown, isBase64Encoded = false): ApiGatewayProxyEvent => {
    const text = body === undefined ? null : JSON.stringify(body);
    return {
      httpMethod,
      path,
      body: text && isBase64Encoded ? Buffer.from(text).toString('base64') : text,
      isBase64Encoded,
      headers: { 'Content-Type': 'application/json' },
    };
  };

  it("logs each request with Powertools: method, path, status and latency, with the invocation's request id", async () => {
    const logger = new Logger({ serviceName: 'baremetal-rollout', logLevel: 'INFO' });
    const logged = toLambdaHandler(() => handlerApi!, logger);
    const lines: Record<string, unknown>[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
      for (const line of String(chunk).split('\n')) if (line.trim().startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
      return true;
    });
    try {
      await logged(event('GET', '/environments/1'), {
        awsRequestId: 'req-1',
        functionName: 'Api',
        functionVersion: '$LATEST',
        invokedFunctionArn: 'arn:aws:lambda:us-east-1:1:function:Api',
        memoryLimitInMB: '512',
      } as never);
      await logged(event('GET', '/environments/42'));
    } finally {
      spy.mockRestore();
    }
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'INFO',
        message: 'request',
        method: 'GET',
        path: '/environments/1',
        status: 200,
        latencyMs: expect.any(Number),
        function_request_id: 'req-1',
      }),
      expect.objectContaining({ level: 'INFO', message: 'request', method: 'GET', path: '/environments/42', status: 404, latencyMs: expect.any(Number) }),
    ]);
  });

  it('exports the one handler the stack points at', () => {
    expect(Object.keys(apiEntry)).toContain('handler');
    expect(typeof apiEntry.handler).toBe('function');
  });

  it('answers environments from the table, secrets masked, with a base64 body decoded', async () => {
    const got = await handler(event('GET', '/environments/1'));
    expect(got.statusCode).toBe(200);
    expect(JSON.parse(got.body).attributes.generated.mysql.root_password).toBe(MASKED_VALUE);
    const cloned = await handler(event('POST', '/environments/1/upgrade/clone', { name: 'prod-8.0', release_id: 2 }, true));
    expect(cloned.statusCode).toBe(200);
    expect(JSON.parse(cloned.body)).toMatchObject({ id: 4, original_cluster_id: 1 });
    const missing = await handler(event('GET', '/environments/42'));
    expect(missing).toMatchObject({ statusCode: 404, headers: { 'content-type': 'application/problem+json' } });
  });

  it('starts a rolling upgrade with StartExecution on its state machine (201), and refuses invalid fields (422) without starting one', async () => {
    const created = await handler(event('POST', '/sessions', upgradeRequest()));
    expect(created.statusCode).toBe(201);
    expect(started).toHaveLength(1);
    expect(started[0]!.target).toBe('AWSStepFunctions.StartExecution');
    expect(started[0]!.body).toMatchObject({ stateMachineArn: ROLLING_UPGRADE_ARN, input: JSON.stringify(upgradeRequest()) });
    const body = JSON.parse(created.body);
    expect(body).toEqual({
      id: idForExecution(body.executionArn),
      kind: 'upgrade',
      executionArn: expect.stringContaining(':execution:BaremetalRollout-RollingUpgrade:'),
    });

    // No workflow runs here: the Location answers PENDING (not 404) until Open Session makes the session.
    const pending = await handler(event('GET', `/sessions/${body.id}`));
    expect(pending.statusCode).toBe(200);
    expect(JSON.parse(pending.body)).toMatchObject({ upgradeId: body.id, state: 'PENDING', executionArn: body.executionArn });

    const invalid = await handler(event('POST', '/sessions', upgradeRequest({ upgradeStepSize: -1 })));
    expect(invalid.statusCode).toBe(422);
    expect(started).toHaveLength(1);
    expect((await handler(event('GET', '/sessions'))).body).toBe('[]');
  });

  it('refuses a base64 body that is not UTF-8, and one with a duplicate key, with a 400 naming it, starting nothing', async () => {
    const before = started.length;
    const notUtf8 = await handler({
      httpMethod: 'POST',
      path: '/sessions',
      body: Buffer.from([0x7b, 0xff, 0x7d]).toString('base64'),
      isBase64Encoded: true,
      headers: { 'content-type': 'application/json' },
    });
    expect(notUtf8.statusCode).toBe(400);
    expect(JSON.parse(notUtf8.body).errors).toEqual([{ field: '', message: 'the body is not UTF-8 text' }]);
    const duplicate = await handler({
      httpMethod: 'POST',
      path: '/sessions',
      body: JSON.stringify(upgradeRequest()).replace('{', '{"upgradeStepSize":9,'),
      isBase64Encoded: false,
      headers: { 'content-type': 'application/json' },
    });
    expect(duplicate.statusCode).toBe(400);
    expect(JSON.parse(duplicate.body).errors).toContainEqual({ field: 'upgradeStepSize', message: expect.stringMatching(/^duplicate key "upgradeStepSize"/) });
    expect(started).toHaveLength(before);
  });

  it('starts an environment upgrade under the name whose execution ARN gives the session id it stored, and claims the environment', async () => {
    const site = buildCloudSite();
    await new DynamoDbEnvironmentStore({ tableName: db.tableName, client: db.client }).seed({
      releases: [],
      environments: site.environments.filter((e) => e.id === 5),
    });
    const created = await handler(event('POST', '/environments/5/upgrade', environmentUpgradeRequest()));
    expect(created.statusCode).toBe(201);
    const body = JSON.parse(created.body);
    const last = started.at(-1)!;
    expect(last.body).toMatchObject({
      stateMachineArn: ENVIRONMENT_UPGRADE_ARN,
      input: JSON.stringify({ environmentId: 5, request: environmentUpgradeRequest() }),
    });
    expect(body).toEqual({
      id: idForExecution(`${ENVIRONMENT_UPGRADE_ARN.replace(':stateMachine:', ':execution:')}:${String(last.body['name'])}`),
      kind: 'environment-upgrade',
      executionArn: expect.any(String),
    });
    expect(JSON.parse((await handler(event('GET', `/sessions/${body.id}`))).body)).toMatchObject({
      upgradeId: body.id,
      state: 'UPDATING',
      environmentId: 5,
      messages: ['Accepted: upgrade of environment 5 to release 2'],
    });
    expect((await handler(event('POST', '/environments/5/upgrade', environmentUpgradeRequest()))).statusCode).toBe(409);
  });
});
