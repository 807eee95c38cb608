import { Stack } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IStateMachine, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { WORKFLOW_FILES } from '../../engine/workflow-files';
import type { GroupDeploymentFunctionName } from '../../lambdas/activities/group-deployment/handlers';
import { createAslStateMachine } from './asl-state-machine';

/**
 * The functions each ASL file invokes. Each machine gets (and may invoke) only its own; the synth fails
 * when a file and its list disagree, so a Task moved between files shows up here.
 */
export const GROUP_DEPLOYMENT_MACHINE_FUNCTIONS = {
  RunNodeBatches: ['StartBatch', 'CheckBatch'],
  DeployGroup: ['PlanPhase', 'EvaluatePhase'],
  GroupDeployment: ['StartDeployment', 'PickReadyGroups', 'FailGroup', 'FinishDeployment'],
} as const satisfies Record<string, readonly GroupDeploymentFunctionName[]>;

export interface GroupDeploymentWorkflowProps {
  functions: Readonly<Record<GroupDeploymentFunctionName, IFunction>>;
  logRetention?: RetentionDays;
}

/**
 * Group deployment as three state machines, each from its ASL file (WORKFLOW_FILES, the files the
 * embedded engine runs): GroupDeployment runs one DeployGroup execution per ready group, DeployGroup
 * one RunNodeBatches execution per page of batches, both with `startExecution.sync:2`. Children come
 * first, since a parent's definition names its child's ARN.
 */
export class GroupDeploymentWorkflow extends Construct {
  readonly runNodeBatches: StateMachine;
  readonly deployGroup: StateMachine;
  /** The one to start: the deployment as a whole. */
  readonly groupDeployment: StateMachine;

  constructor(scope: Construct, id: string, props: GroupDeploymentWorkflowProps) {
    super(scope, id);
    const machine = (name: keyof typeof GROUP_DEPLOYMENT_MACHINE_FUNCTIONS, file: string, children: Record<string, IStateMachine>) =>
      createAslStateMachine(new Construct(this, name), {
        file,
        // Fixed, like the rolling-upgrade machine's: one predictable name (and log group) per stack.
        stateMachineName: `${Stack.of(this).stackName}-${name}`,
        functions: pick(props.functions, GROUP_DEPLOYMENT_MACHINE_FUNCTIONS[name]),
        children,
        logRetention: props.logRetention,
      });

    this.runNodeBatches = machine('RunNodeBatches', WORKFLOW_FILES.runNodeBatches, {});
    this.deployGroup = machine('DeployGroup', WORKFLOW_FILES.deployGroup, { RunNodeBatches: this.runNodeBatches });
    this.groupDeployment = machine('GroupDeployment', WORKFLOW_FILES.groupDeployment, { DeployGroup: this.deployGroup });
  }
}

/** The entries of `keys` that `record` has: one it lacks reaches aslSubstitutions as a missing placeholder. */
function pick<T>(record: Readonly<Record<string, T>>, keys: readonly string[]): Record<string, T> {
  return Object.fromEntries(keys.flatMap((key) => (key in record ? [[key, record[key] as T]] : [])));
}
