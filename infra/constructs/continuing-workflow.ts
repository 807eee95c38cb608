import { Stack, type RemovalPolicy } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { STATE_MACHINES, type StateMachineName } from '../../contracts';
import { createAslStateMachine, grantContinueAsNew } from './asl-state-machine';

export interface ContinuingWorkflowProps<Name extends string> {
  functions: Readonly<Record<Name, IFunction>>;
  logRetention?: RetentionDays;
  /** Of the log group. Default: CDK's (RETAIN). */
  removalPolicy?: RemovalPolicy;
}

/**
 * A workflow of one state machine that continues as new (the rolling upgrade, the task graph), from
 * the very ASL file the embedded engine runs (contracts/), with `${<Name>FunctionArn}` substituted
 * by CloudFormation. Its name is fixed, `<stack>-<machine>`, so that its role can name its own ARN.
 */
export class ContinuingWorkflow<Name extends string> extends Construct {
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, machine: StateMachineName, props: ContinuingWorkflowProps<Name>) {
    super(scope, id);
    this.stateMachine = createAslStateMachine(this, {
      file: STATE_MACHINES[machine].file,
      stateMachineName: `${Stack.of(this).stackName}-${machine}`,
      functions: props.functions,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    grantContinueAsNew(this.stateMachine);
  }
}
