import { SFNClient } from '@aws-sdk/client-sfn';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbDeploymentStore } from '../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbRunRecords } from '../adapters/dynamodb/dynamodb-run-records';
import { DynamoDbSessionStore } from '../adapters/dynamodb/dynamodb-session-store';
import { DynamoDbTaskRunStore } from '../adapters/dynamodb/dynamodb-task-run-store';
import { SfnExecutions } from './aws-client/sfn-executions';
import { ControlPlane } from './control-plane';

export interface DeployedControlPlaneOptions {
  /** The stack's table (sessions, deployments, task runs). */
  tableName: string;
  client: DynamoDBDocumentClient;
  /** The state machines the REST API starts (and whose runs it stops, cancels and resumes). */
  stateMachines: { rollingUpgrade: string; groupDeployment: string; taskGraph: string; environmentUpgrade: string };
  sfn?: SFNClient;
}

/**
 * The deployed control plane as the API sees it (the Lambda behind API Gateway): the stack's table
 * and its state machines through Step Functions (the function may start upgrades, deployments, task
 * runs and environment upgrades, and list and describe the executions of the three run workflows).
 */
export function deployedControlPlane({ tableName, client, stateMachines, sfn = new SFNClient({}) }: DeployedControlPlaneOptions): ControlPlane {
  return new ControlPlane({
    upgrades: new DynamoDbSessionStore({ tableName, client }),
    deployments: new DynamoDbDeploymentStore({ tableName, client }),
    taskRuns: new DynamoDbTaskRunStore({ tableName, client }),
    records: new DynamoDbRunRecords({ tableName, client }),
    executions: new SfnExecutions({ sfn, stateMachines, ownsClient: false }),
    onAws: true,
  });
}
