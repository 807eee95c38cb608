import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbDeploymentStore } from '../../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbRunRecords } from '../../adapters/dynamodb/dynamodb-run-records';
import { DynamoDbSessionStore } from '../../adapters/dynamodb/dynamodb-session-store';
import { DynamoDbTaskRunStore } from '../../adapters/dynamodb/dynamodb-task-run-store';
import { ControlPlane } from '../control-plane';
import type { ControlPlaneEndpoints } from '../endpoints';
import { ScheduleClient } from './schedule-client';
import { SfnExecutions } from './sfn-executions';

/** How a client reaches a control plane's APIs: endpoints (absent on AWS: the SDK's own), region, credentials. */
export interface ClientConnection {
  endpoints: Omit<ControlPlaneEndpoints, 'stepFunctionsEndpoint' | 'dynamodbEndpoint'> & { stepFunctionsEndpoint?: string; dynamodbEndpoint?: string };
  /** A named profile of the shared config (AWS only); the default credential chain without it. */
  profile?: string;
  /** Dummy credentials for a local endpoint (the SDK refuses to sign without any). */
  localCredentials?: boolean;
  /** Real ms between two DescribeExecution polls while following an execution (default 250). */
  pollMs?: number;
}

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * The control plane over the Step Functions, DynamoDB and EventBridge Scheduler APIs, through the
 * SDK: a `rollout serve`, LocalStack or a deployed stack. Executions = SfnExecutions; the stores =
 * the DynamoDB stores over the control plane's table; schedules = ScheduleClient (made on first use).
 */
export function rolloutClient(connection: ClientConnection): ControlPlane {
  const { endpoints } = connection;
  const common = {
    region: endpoints.region,
    ...(connection.profile ? { profile: connection.profile } : {}),
    ...(connection.localCredentials ? { credentials: LOCAL_CREDENTIALS } : {}),
  };
  const sfn = new SFNClient({ ...common, ...(endpoints.stepFunctionsEndpoint ? { endpoint: endpoints.stepFunctionsEndpoint } : {}) });
  const dynamoDb = new DynamoDBClient({ ...common, ...(endpoints.dynamodbEndpoint ? { endpoint: endpoints.dynamodbEndpoint } : {}) });
  const client = DynamoDBDocumentClient.from(dynamoDb, { marshallOptions: { removeUndefinedValues: true } });
  const { tableName } = endpoints;
  return new ControlPlane({
    upgrades: new DynamoDbSessionStore({ tableName, client }),
    deployments: new DynamoDbDeploymentStore({ tableName, client }),
    taskRuns: new DynamoDbTaskRunStore({ tableName, client }),
    records: new DynamoDbRunRecords({ tableName, client }),
    executions: new SfnExecutions({ sfn, stateMachines: endpoints.stateMachines, ...(connection.pollMs !== undefined ? { pollMs: connection.pollMs } : {}) }),
    // No endpoint override: AWS's own API, with its quotas.
    onAws: endpoints.stepFunctionsEndpoint === undefined,
    schedules: () =>
      new ScheduleClient(new SchedulerClient({ ...common, ...(endpoints.schedulerEndpoint ? { endpoint: endpoints.schedulerEndpoint } : {}) }), {
        stateMachines: endpoints.stateMachines,
        ...(endpoints.scheduleGroup ? { scheduleGroup: endpoints.scheduleGroup } : {}),
        ...(endpoints.schedulerRoleArn ? { schedulerRoleArn: endpoints.schedulerRoleArn } : {}),
      }),
    onClose: async () => dynamoDb.destroy(),
  });
}
