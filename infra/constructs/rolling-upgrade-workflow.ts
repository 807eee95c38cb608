import { Stack, type RemovalPolicy } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { STATE_MACHINES, type RollingUpgradeFunctionName, type StateMachineName } from '../../contracts';
import { createAslStateMachine, grantContinueAsNew } from './asl-state-machine';

export interface RollingUpgradeWorkflowProps {
  functions: Readonly<Record<RollingUpgradeFunctionName, IFunction>>;
  logRetention?: RetentionDays;
  /** Of the log groups. Default: CDK's (RETAIN). */
  removalPolicy?: RemovalPolicy;
}

/**
 * The rolling-upgrade state machine, deployed from the very ASL file the embedded engine runs
 * (contracts/), with `${<Name>FunctionArn}` substituted by CloudFormation.
 */
export class RollingUpgradeWorkflow extends Construct {
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, props: RollingUpgradeWorkflowProps) {
    super(scope, id);
    const stack = Stack.of(this);
    // Fixed, so that the role can name the machine's own ARN before the machine exists (grantContinueAsNew).
    const name: StateMachineName = 'RollingUpgrade';
    const stateMachineName = `${stack.stackName}-${name}`;
    this.stateMachine = createAslStateMachine(this, {
      file: STATE_MACHINES[name].file,
      stateMachineName,
      functions: props.functions,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });

    grantContinueAsNew(this.stateMachine);
  }
}
