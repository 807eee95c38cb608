import { performance } from 'node:perf_hooks';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { SFNClient } from '@aws-sdk/client-sfn';
import { createApi, type ApiControlPlane, type ApiHandler } from '../../api';
import { DynamoDbEnvironmentStore } from '../../adapters/dynamodb/dynamodb-environment-store';
import { DynamoDbEnvironmentUpgradeStore } from '../../adapters/dynamodb/dynamodb-environment-upgrade-store';
import { DynamoDbSiteEventStore } from '../../adapters/dynamodb/dynamodb-site-event-store';
import { DynamoDbRunStartStore } from '../../adapters/dynamodb/dynamodb-run-start-store';
import { ENVIRONMENT } from '../../contracts';
import { deployedControlPlane } from '../../control-plane/deployed-control-plane';
import { bodyText, MalformedRequestError, problemFor } from '../../api/problems';
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

/** The deployed control plane, from the function's environment (the stack sets the table and state machine ARNs). */
export function deployedControlPlaneFromEnvironment(env: NodeJS.ProcessEnv, sfn?: SFNClient): ApiControlPlane {
  return deployedControlPlane({
    tableName: required(env, ENVIRONMENT.tableName),
    client: documentClient(),
    stateMachines: {
      rollingUpgrade: required(env, ENVIRONMENT.rollingUpgradeStateMachineArn),
      // Read when a deployment is started, stopped or cancelled: the target of SSM's notifications (command-ends.ts) never does.
      get groupDeployment() {
        return required(env, ENVIRONMENT.groupDeploymentStateMachineArn);
      },
      // Read when a task run is started, resumed, stopped or cancelled: a stack from before it answers that request, not every one.
      get taskGraph() {
        return required(env, ENVIRONMENT.taskGraphStateMachineArn);
      },
      // Read when an environment upgrade starts: a stack without it answers that request, not every one.
      get environmentUpgrade() {
        return required(env, ENVIRONMENT.environmentUpgradeStateMachineArn);
      },
    },
    ...(sfn ? { sfn } : {}),
  });
}

/** The deployed API over the table, Step Functions and (when the stack gave it one) the site connection. */
export async function apiFromEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<ApiHandler> {
  const tableName = required(env, ENVIRONMENT.tableName);
  const site = await loadBootAndInventory(env);
  return createApi({
    controlPlane: deployedControlPlaneFromEnvironment(env),
    environments: new DynamoDbEnvironmentStore({ tableName, client: documentClient() }),
    environmentUpgrades: new DynamoDbEnvironmentUpgradeStore({ tableName, client: documentClient() }),
    runStarts: new DynamoDbRunStartStore({ tableName, client: documentClient() }),
    siteEvents: new DynamoDbSiteEventStore({ tableName, client: documentClient() }),
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
