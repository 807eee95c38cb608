import { Duration } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { GROUP_DEPLOYMENT_FUNCTION_NAMES, PROJECT_PATHS, type GroupDeploymentFunctionName } from '../../contracts';
import { WorkflowFunctions, type WorkflowFunctionsProps } from './workflow-functions';

/**
 * Every group-deployment Task (statemachines/group-deployment.asl.json, deploy-group.asl.json,
 * run-node-batches.asl.json) has TimeoutSeconds 300, StartDeployment's included: the Lambda gets the
 * same, so that it neither outlives its Task nor is cut off before the workflow gives up on it.
 */
export const GROUP_DEPLOYMENT_STEP_TIMEOUT = Duration.minutes(5);

/** The site connection (`environment`, `policies`), the table, logging and network; the entry and timeouts are fixed here. */
export type GroupDeploymentFunctionsProps = Omit<WorkflowFunctionsProps<string>, 'entry' | 'timeouts'>;

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
