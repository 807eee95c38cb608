import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ArnFormat, Stack, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType, type IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { aslSubstitutions, placeholderValues, PROJECT_ROOT } from '../../contracts';

/** The rule Step Functions manages in each account and region to learn when a `.sync` child execution ends. */
export const SYNC_EVENTS_RULE_NAME = 'StepFunctionsGetEventsForStepFunctionsExecutionRule';

export interface AslStateMachineProps {
  /** The ASL file, deployed inline exactly as written. */
  file: string;
  /** Fixed physical name: roles and other machines can name its ARN before it exists. */
  stateMachineName: string;
  /** Substituted for `${<Key>FunctionArn}`; the machine may invoke each. */
  functions: Readonly<Record<string, IFunction>>;
  /** Substituted for `${<Key>StateMachineArn}`: children the machine runs with `states:startExecution.sync:2` (or starts with `states:startExecution`). */
  children?: Readonly<Record<string, IStateMachine>>;
  logRetention?: RetentionDays;
  /** Of the log group. Default: CDK's (RETAIN). */
  removalPolicy?: RemovalPolicy;
}

/**
 * A state machine from a reviewable ASL file, with `${...}` filled in by CloudFormation
 * (DefinitionSubstitutions). The synth fails, naming the file, when a placeholder has no value or a
 * value has no placeholder. Creates `Logs` and `StateMachine` directly in `scope`, so that a
 * workflow construct keeps the logical ids it had before this helper existed.
 */
export function createAslStateMachine(scope: Construct, props: AslStateMachineProps): StateMachine {
  const definition = readFileSync(props.file, 'utf8');
  const children = props.children ?? {};
  const values = placeholderValues(Object.keys(props.functions), Object.keys(children), {
    functionArn: (name) => (props.functions[name] as IFunction).functionArn,
    stateMachineArn: (name) => (children[name] as IStateMachine).stateMachineArn,
  });

  const stateMachine = new StateMachine(scope, 'StateMachine', {
    stateMachineName: props.stateMachineName,
    stateMachineType: StateMachineType.STANDARD,
    // fromString keeps the ASL inline in the template (fromFile would upload it as an S3 asset).
    definitionBody: DefinitionBody.fromString(definition),
    definitionSubstitutions: aslSubstitutions(path.relative(PROJECT_ROOT, props.file), definition, values),
    logs: {
      // The /aws/vendedlogs/ prefix keeps the CloudWatch Logs resource policy from growing with every log group.
      destination: new LogGroup(scope, 'Logs', {
        logGroupName: `/aws/vendedlogs/states/${props.stateMachineName}`,
        retention: props.logRetention ?? RetentionDays.ONE_MONTH,
        removalPolicy: props.removalPolicy,
      }),
      level: LogLevel.ALL,
      // Execution data carries site URLs and node names; the table already records what matters.
      includeExecutionData: false,
    },
    tracingEnabled: true,
  });

  // The ASL invokes each function by its unqualified ARN: no grant on its versions and aliases (grantInvoke's `:*`).
  const functionArns = Object.values(props.functions).map((fn) => fn.functionArn);
  if (functionArns.length > 0) stateMachine.addToRolePolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: functionArns }));
  FIXED_NAMES.set(stateMachine, props.stateMachineName);
  // A child started with `.sync` is polled and stopped by the parent; one started without (a child the parent follows through its session) only started.
  const waitsForChildren = definition.includes('states:startExecution.sync');
  for (const child of Object.values(children)) {
    if (waitsForChildren) grantStartSyncChild(stateMachine, child);
    else child.grantStartExecution(stateMachine);
  }
  acknowledgeStateMachineFindings(stateMachine, waitsForChildren ? Object.values(children) : []);
  return stateMachine;
}

/**
 * What `startExecution.sync:2` needs besides starting the child: polling and stopping the child's
 * executions (a Map that fails stops its children), and the managed EventBridge rule through which
 * Step Functions learns that the child has finished.
 */
function grantStartSyncChild(parent: StateMachine, child: IStateMachine): void {
  child.grantStartExecution(parent);
  parent.addToRolePolicy(new PolicyStatement({ actions: ['states:DescribeExecution', 'states:StopExecution'], resources: [childExecutionsArn(child)] }));
  parent.addToRolePolicy(
    new PolicyStatement({
      actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
      resources: [Stack.of(parent).formatArn({ service: 'events', resource: 'rule', resourceName: SYNC_EVENTS_RULE_NAME })],
    }),
  );
}

/**
 * "Continue As New Execution" starts the next execution of the machine through $$.StateMachine.Id.
 * Granting on stateMachine.stateMachineArn would make the role's policy depend on the machine, which
 * already depends on the policy; the ARN built from the fixed name breaks that cycle.
 */
export function grantContinueAsNew(stateMachine: StateMachine): void {
  stateMachine.addToRolePolicy(
    new PolicyStatement({
      actions: ['states:StartExecution'],
      resources: [
        Stack.of(stateMachine).formatArn({
          service: 'states',
          resource: 'stateMachine',
          resourceName: fixedName(stateMachine),
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ],
    }),
  );
}

/** The physical names given to the machines made here (stateMachineName itself is a token). */
const FIXED_NAMES = new WeakMap<IStateMachine, string>();

export function fixedName(machine: IStateMachine): string {
  const name = FIXED_NAMES.get(machine);
  if (!name) throw new Error(`${machine.node.path}: a child must be a state machine made by createAslStateMachine (a fixed name)`);
  return name;
}

/** Every execution of a machine with a fixed name (a child's, or a workflow's the API reads): execution names are chosen at run time. */
export function childExecutionsArn(child: IStateMachine): string {
  return Stack.of(child).formatArn({
    service: 'states',
    resource: 'execution',
    resourceName: `${fixedName(child)}:*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}

/** cdk-nag AwsSolutions findings on a state machine's role that cannot be scoped further, each with its reason. */
function acknowledgeStateMachineFindings(stateMachine: StateMachine, children: readonly IStateMachine[]): void {
  const validations = Validations.of(stateMachine);
  validations.acknowledge({
    id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
    reason: 'Logging to CloudWatch Logs (logs:CreateLogDelivery, ...) and X-Ray tracing (xray:PutTraceSegments, ...) take no resource narrower than *.',
  });
  for (const child of children) {
    validations.acknowledge({
      id: `AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${fixedName(child)}:*]`,
      reason: 'startExecution.sync:2 polls and stops the child executions it started; their names are chosen at run time.',
    });
  }
}
