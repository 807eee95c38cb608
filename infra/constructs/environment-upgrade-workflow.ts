import { ArnFormat, Stack, type RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IStateMachine, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { STATE_MACHINES, type EnvironmentUpgradeFunctionName, type StateMachineName } from '../../contracts';
import { createAslStateMachine } from './asl-state-machine';

export interface EnvironmentUpgradeWorkflowProps {
  functions: Readonly<Record<EnvironmentUpgradeFunctionName, IFunction>>;
  /** The rolling-upgrade machine it starts for the controllers and for the other nodes. */
  rollingUpgrade: IStateMachine;
  logRetention?: RetentionDays;
  /** Of the log groups. Default: CDK's (RETAIN). */
  removalPolicy?: RemovalPolicy;
}

/**
 * The side-by-side environment upgrade, deployed from the very ASL file the embedded engine runs:
 * its functions, the rolling-upgrade machine as a child it starts (and polls through its session),
 * and its own continue-as-new.
 */
export class EnvironmentUpgradeWorkflow extends Construct {
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, props: EnvironmentUpgradeWorkflowProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const name: StateMachineName = 'EnvironmentUpgrade';
    const stateMachineName = `${stack.stackName}-${name}`;
    this.stateMachine = createAslStateMachine(this, {
      file: STATE_MACHINES[name].file,
      stateMachineName,
      functions: props.functions,
      children: { RollingUpgrade: props.rollingUpgrade },
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    // Continue-as-new, by the machine's fixed name (its own ARN would make the policy depend on the machine).
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({
        actions: ['states:StartExecution'],
        resources: [stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: stateMachineName, arnFormat: ArnFormat.COLON_RESOURCE_NAME })],
      }),
    );
  }
}
