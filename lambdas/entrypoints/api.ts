import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from '@aws-lambda-powertools/logger';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { createApi, type ApiControlPlane, type ApiHandler } from '../../api';
import { DynamoDbDeploymentStore } from '../../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbEnvironmentStore } from '../../adapters/dynamodb/dynamodb-environment-store';
import { DynamoDbEnvironmentUpgradeStore } from '../../adapters/dynamodb/dynamodb-environment-upgrade-store';
import { DynamoDbRunStartStore } from '../../adapters/dynamodb/dynamodb-run-start-store';
import { DynamoDbSessionStore } from '../../adapters/dynamodb/dynamodb-session-store';
import { DynamoDbTaskRunStore } from '../../adapters/dynamodb/dynamodb-task-run-store';
import { ENVIRONMENT, type WorkflowName } from '../../contracts';
import { executionArnOf } from '../../core/environments';
import { idForExecution } from '../../core/execution-id';
import { runKindOf } from '../../engine/runtime';
import { bodyText, MalformedRequestError, problemFor } from '../../api/problems';
import { StoreSessions } from '../../engine/store-sessions';
import { wakeThroughSfn } from '../../engine/operator-wake';
import { createRequestLogger, normalizeError } from '../activities/middleware';
import { documentClient, loadBootAndInventory, required } from './environment';

/** The Lambda context, as the logger takes it. */
type Context = Parameters<Logger['addContext']>[0];

/** The fields of an API Gateway REST (v1) proxy event the API reads. */
export interface ApiGatewayProxyEvent {
  httpMethod: string;
  /** The resource path, without the stage. */
  path: string;
  body?: string | null;
  isBase64Encoded?: boolean;
  /** As sent: API Gateway keeps the client's case for header names. */
  headers?: Record<string, string | undefined> | null;
}

/** A header of a proxy event, whatever the case of its name. */
function header(event: ApiGatewayProxyEvent, name: string): string | undefined {
  const entry = Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name);
  return entry?.[1] ?? undefined;
}

export interface ApiGatewayProxyResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The deployed control plane as the API sees it: sessions read and cancelled in the table (as any
 * observer of it does), workflows started with StartExecution under a fresh name.
 */
export function deployedControlPlane(env: NodeJS.ProcessEnv, sfn: SFNClient = new SFNClient({})): ApiControlPlane {
  const tableName = required(env, ENVIRONMENT.tableName);
  const client = documentClient();
  const sessionStore = new DynamoDbSessionStore({ tableName, client });
  const deploymentStore = new DynamoDbDeploymentStore({ tableName, client });
  // A cancel wakes a rolling upgrade parked for its operator (SendTaskSuccess with the token stored on the session).
  const reads = new StoreSessions(sessionStore, deploymentStore, new DynamoDbTaskRunStore({ tableName, client }), true, undefined, wakeThroughSfn(sfn));
  // The REST API starts upgrades and deployments; task runs are started through Step Functions.
  const stateMachines: Partial<Record<WorkflowName, string>> = {
    rollingUpgrade: required(env, ENVIRONMENT.rollingUpgradeStateMachineArn),
    groupDeployment: required(env, ENVIRONMENT.groupDeploymentStateMachineArn),
  };
  const start = async (stateMachineArn: string, input: unknown, name: string = randomUUID()) => {
    const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }));
    if (!executionArn) throw new Error('StartExecution answered without an executionArn');
    // As the first activity of each workflow derives it from $$.Execution.Id.
    return { id: idForExecution(executionArn), executionArn };
  };
  return {
    sessions: () => reads.sessions(),
    session: (id) => reads.session(id),
    cancel: (id) => reads.cancel(id),
    // Pause, unpause and approve wake a rolling upgrade parked for its operator the same way.
    gate: (id, action) => reads.gate(id, action),
    stop: (id) => reads.stop(id),
    status: (id) => reads.status(id),
    async run(workflow, input) {
      const stateMachineArn = stateMachines[workflow];
      if (!stateMachineArn) throw new Error(`the REST API does not start ${workflow} workflows`);
      return { ...(await start(stateMachineArn, input)), kind: runKindOf(workflow) };
    },
    startEnvironmentUpgrade: (input, executionName) => start(required(env, ENVIRONMENT.environmentUpgradeStateMachineArn), input, executionName),
    environmentUpgradeId: (executionName) => idForExecution(executionArnOf(required(env, ENVIRONMENT.environmentUpgradeStateMachineArn), executionName)),
    now: () => Date.now(),
    removeSession: (id) => sessionStore.removeEndedSession(id),
    removeDeployment: (id) => deploymentStore.removeEndedDeployment(id),
  };
}

/** The deployed API over the table, Step Functions and (when the stack gave it one) the site connection. */
export async function apiFromEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<ApiHandler> {
  const tableName = required(env, ENVIRONMENT.tableName);
  const site = await loadBootAndInventory(env);
  return createApi({
    controlPlane: deployedControlPlane(env),
    environments: new DynamoDbEnvironmentStore({ tableName, client: documentClient() }),
    environmentUpgrades: new DynamoDbEnvironmentUpgradeStore({ tableName, client: documentClient() }),
    runStarts: new DynamoDbRunStartStore({ tableName, client: documentClient() }),
    ...(site ? { site } : {}),
  });
}

/**
 * API Gateway's proxy event in, the API's answer out: the same routes `rollout serve` serves. Each
 * request is one log line (Powertools, with the invocation's request id): method, path, status and
 * latency, at INFO; a 5xx, or an error that escapes (API Gateway answers 502), at ERROR.
 */
export function toLambdaHandler(
  api: () => ApiHandler | Promise<ApiHandler>,
  logger: Logger = createRequestLogger(),
): (event: ApiGatewayProxyEvent, context?: Context) => Promise<ApiGatewayProxyResult> {
  return async (event, context) => {
    if (context) logger.addContext(context);
    const started = performance.now();
    const request = { method: event.httpMethod, path: event.path };
    let response;
    try {
      // A binary body comes base64-encoded: its bytes are checked as UTF-8, as `rollout serve` checks them.
      const body = event.body == null ? undefined : event.isBase64Encoded ? bodyText(Buffer.from(event.body, 'base64')) : event.body;
      response = await (await api())({ ...request, body, contentType: header(event, 'content-type') });
    } catch (err) {
      if (!(err instanceof MalformedRequestError)) {
        logger.error('request failed', { ...request, latencyMs: Math.round(performance.now() - started), error: normalizeError(err) });
        throw err;
      }
      response = problemFor(err, 400);
    }
    const line = { ...request, status: response.status, latencyMs: Math.round(performance.now() - started) };
    if (response.status >= 500) logger.error('request', line);
    else logger.info('request', line);
    return { statusCode: response.status, headers: response.headers, body: response.body === undefined ? '' : JSON.stringify(response.body) };
  };
}

let built: Promise<ApiHandler> | undefined;
/** The deployed REST API (handler `index.handler`), its clients built once per container (a failed build is tried again). */
export const handler = toLambdaHandler(
  () =>
    (built ??= apiFromEnvironment().catch((err: unknown) => {
      built = undefined;
      throw err;
    })),
);
