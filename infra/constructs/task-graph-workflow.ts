import { Stack, type RemovalPolicy } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { STATE_MACHINES, type StateMachineName, type TaskGraphFunctionName } from '../../contracts';
import { createAslStateMachine, grantContinueAsNew } from './asl-state-machine';

export interface TaskGraphWorkflowProps {
  functions: Readonly<Record<TaskGraphFunctionName, IFunction>>;
  logRetention?: RetentionDays;
  /** Of the log group. Default: CDK's (RETAIN). */
  removalPolicy?: RemovalPolicy;
}

/**
 * The task-graph state machine (Fuel's granular deployment on the annealer), from the ASL file the
 * embedded engine runs. Started alone, or by DeployGroup as a group's deploy phase; it continues
 * as new on its own when started alone.
 */
export class TaskGraphWorkflow extends Construct {
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, props: TaskGraphWorkflowProps) {
    super(scope, id);
    const name: StateMachineName = 'TaskGraph';
    this.stateMachine = createAslStateMachine(this, {
      file: STATE_MACHINES[name].file,
      stateMachineName: `${Stack.of(this).stackName}-${name}`,
      functions: props.functions,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    grantContinueAsNew(this.stateMachine);
  }
}
