import { randomUUID } from 'node:crypto';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { createApi, type ApiControlPlane, type ApiHandler } from '../../api';
import { DynamoDbDeploymentStore } from '../../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbEnvironmentStore } from '../../adapters/dynamodb/dynamodb-environment-store';
import { DynamoDbSessionStore } from '../../adapters/dynamodb/dynamodb-session-store';
import { ENVIRONMENT, type WorkflowName } from '../../contracts';
import { idForExecution } from '../../core/execution-id';
import { StoreSessions } from '../../engine/store-sessions';
import { wakeThroughSfn } from '../../engine/operator-wake';
import { documentClient, required } from './environment';

/** The fields of an API Gateway REST (v1) proxy event the API reads. */
export interface ApiGatewayProxyEvent {
  httpMethod: string;
  /** The resource path, without the stage. */
  path: string;
  body?: string | null;
  isBase64Encoded?: boolean;
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
  // A cancel wakes a rolling upgrade parked for its operator (SendTaskSuccess with the token stored on the session).
  const reads = new StoreSessions(new DynamoDbSessionStore({ tableName, client }), new DynamoDbDeploymentStore({ tableName, client }), true, undefined, wakeThroughSfn(sfn));
  const stateMachines: Record<WorkflowName, string> = {
    rollingUpgrade: required(env, ENVIRONMENT.rollingUpgradeStateMachineArn),
    groupDeployment: required(env, ENVIRONMENT.groupDeploymentStateMachineArn),
  };
  return {
    sessions: () => reads.sessions(),
    session: (id) => reads.session(id),
    cancel: (id) => reads.cancel(id),
    async run(workflow, input) {
      const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: stateMachines[workflow], name: randomUUID(), input: JSON.stringify(input) }));
      if (!executionArn) throw new Error('StartExecution answered without an executionArn');
      // As Open Session and Start Deployment derive it from $$.Execution.Id.
      return { id: idForExecution(executionArn), kind: workflow === 'rollingUpgrade' ? 'upgrade' : 'deployment', executionArn };
    },
  };
}

export function apiFromEnvironment(env: NodeJS.ProcessEnv = process.env): ApiHandler {
  const environments = new DynamoDbEnvironmentStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() });
  return createApi({ controlPlane: deployedControlPlane(env), environments });
}

/** API Gateway's proxy event in, the API's answer out: the same routes `rollout serve` serves. */
export function toLambdaHandler(api: () => ApiHandler): (event: ApiGatewayProxyEvent) => Promise<ApiGatewayProxyResult> {
  return async (event) => {
    const body = event.body == null ? undefined : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    const response = await api()({ method: event.httpMethod, path: event.path, body });
    return { statusCode: response.status, headers: response.headers, body: response.body === undefined ? '' : JSON.stringify(response.body) };
  };
}

let built: ApiHandler | undefined;
/** The deployed REST API (handler `index.handler`), its clients built once per container. */
export const handler = toLambdaHandler(() => (built ??= apiFromEnvironment()));
