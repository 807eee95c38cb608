import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { GROUP_DEPLOYMENT_FUNCTION_NAMES, PROJECT_PATHS, type GroupDeploymentFunctionName } from '../../contracts';
import { WorkflowFunctions } from './workflow-functions';

/**
 * Every group-deployment Task (statemachines/group-deployment.asl.json, deploy-group.asl.json,
 * run-node-batches.asl.json) has TimeoutSeconds 300, StartDeployment's included: the Lambda gets the
 * same, so that it neither outlives its Task nor is cut off before the workflow gives up on it.
 */
export const GROUP_DEPLOYMENT_STEP_TIMEOUT = Duration.minutes(5);

export interface GroupDeploymentFunctionsProps {
  table: ITable;
  /** The site connection; the table name is added here. */
  environment: Readonly<Record<string, string>>;
  policies?: readonly PolicyStatement[];
  logRetention?: RetentionDays;
}

/** One Lambda per group-deployment function, from lambdas/entrypoints/group-deployment.ts. */
export class GroupDeploymentFunctions extends WorkflowFunctions<GroupDeploymentFunctionName> {
  constructor(scope: Construct, id: string, props: GroupDeploymentFunctionsProps) {
    const timeouts = Object.fromEntries(GROUP_DEPLOYMENT_FUNCTION_NAMES.map((name) => [name, GROUP_DEPLOYMENT_STEP_TIMEOUT])) as Record<
      GroupDeploymentFunctionName,
      Duration
    >;
    super(scope, id, { ...props, entry: PROJECT_PATHS.groupDeploymentEntry, timeouts });
  }
}
