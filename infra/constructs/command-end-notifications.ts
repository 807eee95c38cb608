import { Aws, CfnRule, Duration, Fn, Stack, Token, type RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { ENVIRONMENT, PROJECT_PATHS, PROJECT_ROOT } from '../../contracts';
import { InvalidInputError } from '../../core/errors';
import { ENDED_INVOCATION_STATUSES, INVOCATION_STATUS_CHANGE, SSM_EVENT_SOURCE } from '../../core/site/command-end-event';
import type { SiteProfile, TransportProfile } from '../../core/site/site-profile';
import { profileTransports } from './site-connection';
import { acknowledgeFunctionFindings, DEPS_LOCK_FILE, grantTableActions, LAMBDA_BUNDLING } from './workflow-functions';

/**
 * How long a notification is still worth delivering (EventBridge's retries of the target, Lambda's of the function):
 * past the longest backstop (siteEvents.backstopSeconds is at most 3600), the backstop poll has read the check.
 */
const MAX_EVENT_AGE = Duration.hours(1);

/** The instances whose commands' ends reach the control plane: those of the profile's SSM transports with commandNotifications, in their one region. */
export interface NotifyingInstances {
  region: string;
  instanceIds: string[];
  /** The profile's fields that ask for the notifications (`transport`, `bootService.transport`, ...). */
  fields: string[];
}

type SsmTransportProfile = Extract<TransportProfile, { type: 'ssm' }>;

/**
 * The instances of the profile's SSM transports that set `commandNotifications`, or undefined when none does. SSM
 * publishes a command's notifications on the default bus of the region it ran in, where the stack's rule must be:
 * notifying transports in two regions are refused, naming their fields.
 */
export function notifyingInstances(profile: SiteProfile | undefined): NotifyingInstances | undefined {
  const notifying = (profile ? profileTransports(profile) : []).filter(
    (entry): entry is [string, SsmTransportProfile] => entry[1].type === 'ssm' && entry[1].commandNotifications === true,
  );
  const regions = [...new Set(notifying.map(([, transport]) => transport.region))];
  if (regions.length === 0) return undefined;
  if (regions.length > 1) {
    throw new InvalidInputError(
      'site profile for the stack',
      notifying.map(([field, transport]) => ({
        field: `${field}.commandNotifications`,
        message: `SSM's notifications reach one region's rule: the notifying transports are in ${regions.join(', ')} (this one in ${transport.region})`,
      })),
    );
  }
  return {
    region: regions[0]!,
    instanceIds: [...new Set(notifying.flatMap(([, transport]) => transport.instanceIds))].sort(),
    fields: notifying.map(([field]) => field),
  };
}

export interface CommandEndNotificationsProps {
  /** The instances whose health checks' ends wake their sessions (notifyingInstances). */
  instances: NotifyingInstances;
  table: ITable;
  /** The workflow whose executions park for a check's end: the function sends SendTaskSuccess with their tokens. */
  rollingUpgrade: IStateMachine;
  logRetention?: RetentionDays;
  removalPolicy?: RemovalPolicy;
}

/**
 * SSM's own notifications of a health check's end, into the control plane (issue 29: SSM without waiting): an
 * EventBridge rule on the default bus takes the "EC2 Command Invocation Status-change Notification" of an ended
 * invocation on the notifying instances, and its target (lambdas/entrypoints/command-ends.ts) reads the command's
 * Comment (GetCommandInvocation), records a site event of kind `command` for the session it names and wakes that
 * session's parked execution (SendTaskSuccess). A notification lost or delivered late is caught by the backstop poll.
 * The function runs outside any VPC: it calls AWS APIs only, never the site.
 */
export class CommandEndNotifications extends Construct {
  readonly rule: Rule;
  readonly handler: NodejsFunction;

  constructor(scope: Construct, id: string, props: CommandEndNotificationsProps) {
    super(scope, id);
    assertRegion(this, props.instances);
    this.handler = this.handlerFunction(props);
    this.rule = new Rule(this, 'Rule', {
      description: 'baremetal-rollout: the end of a command on the head node (a health check) wakes the session waiting for it',
      eventPattern: {
        source: [SSM_EVENT_SOURCE],
        detailType: [INVOCATION_STATUS_CHANGE],
        detail: { status: [...ENDED_INVOCATION_STATUSES], 'instance-id': props.instances.instanceIds },
      },
      // A notification EventBridge cannot deliver (throttled, the function away) is retried within its age, then
      // dropped: the backstop poll reads the check (no dead-letter queue: nobody would replay a stale end).
      targets: [new LambdaFunction(this.handler, { retryAttempts: 8, maxEventAge: MAX_EVENT_AGE })],
    });
    acknowledgeFunctionFindings(this, props);
  }

  /** The target, with its own role and log group: the table's site events and sessions, the command's Comment, the session's wake. */
  private handlerFunction(props: CommandEndNotificationsProps): NodejsFunction {
    const logGroup = new LogGroup(this, 'HandlerLogs', { retention: props.logRetention ?? RetentionDays.ONE_MONTH, removalPolicy: props.removalPolicy });
    const role = new Role(this, 'HandlerRole', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    logGroup.grantWrite(role);
    const handler = new NodejsFunction(this, 'Handler', {
      role,
      entry: PROJECT_PATHS.commandEndsEntry,
      handler: 'CommandEnds',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: DEPS_LOCK_FILE,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      // One GetCommandInvocation, one PutItem, one UpdateItem and one SendTaskSuccess.
      timeout: Duration.seconds(30),
      environment: {
        [ENVIRONMENT.tableName]: props.table.tableName,
        [ENVIRONMENT.rollingUpgradeStateMachineArn]: props.rollingUpgrade.stateMachineArn,
        NODE_OPTIONS: '--enable-source-maps',
      },
      tracing: Tracing.ACTIVE,
      logGroup,
      // A failed take (the table away) is tried again by Lambda, within the notification's age.
      retryAttempts: 2,
      maxEventAge: MAX_EVENT_AGE,
      bundling: LAMBDA_BUNDLING,
    });
    grantTableActions(props.table, handler, 'CommandEnds');
    // It wakes a parked execution, nothing more: SendTaskSuccess, not the heartbeat or the failure.
    props.rollingUpgrade.grant(handler, 'states:SendTaskSuccess');
    // The notification carries no Comment: the ended invocation's is read (it names the session). GetCommandInvocation
    // takes no resource narrower than * (acknowledged with the functions' findings).
    handler.addToRolePolicy(new PolicyStatement({ actions: ['ssm:GetCommandInvocation'], resources: ['*'] }));
    return handler;
  }
}

/**
 * The rule sees the notifications of its own region only: a stack deployed elsewhere than the notifying transports'
 * region would park every check until its backstop. Refused at synth when the stack's region is known, else at deploy
 * (a template rule).
 */
function assertRegion(scope: Construct, { region, fields }: NotifyingInstances): void {
  const stackRegion = Stack.of(scope).region;
  if (!Token.isUnresolved(stackRegion)) {
    if (stackRegion !== region)
      throw new InvalidInputError(
        'site profile for the stack',
        fields.map((field) => ({
          field: `${field}.commandNotifications`,
          message: `SSM's notifications reach the rule of their own region only: the transport is in ${region}, the stack in ${stackRegion}`,
        })),
      );
    return;
  }
  new CfnRule(scope, 'NotificationsRegion', {
    assertions: [
      {
        assert: Fn.conditionEquals(Aws.REGION, region),
        assertDescription: `SSM's command notifications (${fields.map((field) => `${field}.commandNotifications`).join(', ')} in the site profile) reach the default bus of ${region} only: deploy the stack in ${region}.`,
      },
    ],
  });
}
