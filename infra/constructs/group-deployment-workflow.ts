import { Stack, type RemovalPolicy } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IStateMachine, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { STATE_MACHINES, type GroupDeploymentFunctionName } from '../../contracts';
import { createAslStateMachine } from './asl-state-machine';

type GroupDeploymentMachine = 'RunNodeBatches' | 'DeployGroup' | 'GroupDeployment';

export interface GroupDeploymentWorkflowProps {
  functions: Readonly<Record<GroupDeploymentFunctionName, IFunction>>;
  /** The task-graph machine a group's deploy phase runs when the deployment has a task graph. */
  taskGraph: IStateMachine;
  logRetention?: RetentionDays;
  /** Of the log groups. Default: CDK's (RETAIN). */
  removalPolicy?: RemovalPolicy;
}

/**
 * Group deployment as three state machines, each from its ASL file (contracts/, the files the
 * embedded engine runs): GroupDeployment runs one DeployGroup execution per ready group, DeployGroup
 * one RunNodeBatches execution per page of batches (or, with a task graph, TaskGraph executions for
 * its deploy phase), all with `startExecution.sync:2`. Each machine
 * gets (and may invoke) only the functions STATE_MACHINES lists for it; the synth fails when a file
 * and its list disagree. Children come first, since a parent's definition names its child's ARN.
 */
export class GroupDeploymentWorkflow extends Construct {
  readonly runNodeBatches: StateMachine;
  readonly deployGroup: StateMachine;
  /** The one to start: the deployment as a whole. */
  readonly groupDeployment: StateMachine;

  constructor(scope: Construct, id: string, props: GroupDeploymentWorkflowProps) {
    super(scope, id);
    const machine = (name: GroupDeploymentMachine, children: Record<string, IStateMachine>) =>
      createAslStateMachine(new Construct(this, name), {
        file: STATE_MACHINES[name].file,
        // Fixed, like the rolling-upgrade machine's: one predictable name (and log group) per stack.
        stateMachineName: `${Stack.of(this).stackName}-${name}`,
        functions: pick(props.functions, STATE_MACHINES[name].functions),
        children,
        logRetention: props.logRetention,
        removalPolicy: props.removalPolicy,
      });

    this.runNodeBatches = machine('RunNodeBatches', {});
    this.deployGroup = machine('DeployGroup', { RunNodeBatches: this.runNodeBatches, TaskGraph: props.taskGraph });
    this.groupDeployment = machine('GroupDeployment', { DeployGroup: this.deployGroup });
  }
}

/** The entries of `keys` that `record` has: one it lacks reaches aslSubstitutions as a missing placeholder. */
function pick<T>(record: Readonly<Record<string, T>>, keys: readonly string[]): Record<string, T> {
  return Object.fromEntries(keys.flatMap((key) => (key in record ? [[key, record[key] as T]] : [])));
}
