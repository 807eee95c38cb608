import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ArnFormat, Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { WORKFLOW_FILES } from '../../engine/workflow-files';
import type { RollingUpgradeFunctionName } from '../../lambdas/handlers/rolling-upgrade/handlers';
import { aslSubstitutions } from '../asl-substitutions';
import { PROJECT_ROOT } from '../project-paths';

export interface RollingUpgradeWorkflowProps {
  functions: Readonly<Record<RollingUpgradeFunctionName, IFunction>>;
  logRetention?: RetentionDays;
}

/**
 * The rolling-upgrade state machine, deployed from the very ASL file the embedded engine runs
 * (WORKFLOW_FILES), with `${<Name>FunctionArn}` substituted by CloudFormation.
 */
export class RollingUpgradeWorkflow extends Construct {
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, props: RollingUpgradeWorkflowProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const file = WORKFLOW_FILES.rollingUpgrade;
    const definition = readFileSync(file, 'utf8');
    const functionArns = Object.fromEntries(Object.entries(props.functions).map(([name, fn]) => [`${name}FunctionArn`, fn.functionArn]));

    // Fixed, so that the role can name the machine's own ARN before the machine exists (see below).
    const stateMachineName = `${stack.stackName}-RollingUpgrade`;
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName,
      stateMachineType: StateMachineType.STANDARD,
      // fromString keeps the ASL inline in the template (fromFile would upload it as an S3 asset).
      definitionBody: DefinitionBody.fromString(definition),
      definitionSubstitutions: aslSubstitutions(path.relative(PROJECT_ROOT, file), definition, functionArns),
      logs: {
        // The /aws/vendedlogs/ prefix keeps the CloudWatch Logs resource policy from growing with every log group.
        destination: new LogGroup(this, 'Logs', {
          logGroupName: `/aws/vendedlogs/states/${stateMachineName}`,
          retention: props.logRetention ?? RetentionDays.ONE_MONTH,
        }),
        level: LogLevel.ALL,
        // Execution data carries site URLs and node names; the session table already records what matters.
        includeExecutionData: false,
      },
      tracingEnabled: true,
    });

    for (const fn of Object.values(props.functions)) fn.grantInvoke(this.stateMachine);

    // "Continue As New Execution" starts the next execution of this machine through $$.StateMachine.Id.
    // Granting on stateMachine.stateMachineArn would make the role's policy depend on the machine, which
    // already depends on the policy; the ARN built from the fixed name breaks that cycle.
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({
        actions: ['states:StartExecution'],
        resources: [
          stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: stateMachineName, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
        ],
      }),
    );
  }
}
