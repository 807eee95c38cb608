import { Stack, type RemovalPolicy } from 'aws-cdk-lib';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { CfnSchedule, CfnScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { InvalidInputError } from '../../core/errors';
import { parseScheduledRequest, scheduleTimingProblems, type ScheduledWorkflow } from '../../core/run-schedules/schedule';

/** A schedule declared with the stack (beside the ones `rollout schedule create --aws` adds at run time). */
export interface DeclaredSchedule {
  /** EventBridge's schedule name rule: 1-64 letters, digits, '-', '_' or '.'. */
  name: string;
  /** `cron(...)`, `rate(...)` or `at(...)`, as EventBridge Scheduler reads it. */
  expression: string;
  /** IANA time zone of the expression. Default: UTC. */
  timeZone?: string;
  /** Minutes a firing may drift (FLEXIBLE mode). Default: off. */
  flexibleWindowMinutes?: number;
  /** What it starts, and the request it starts it with (checked at synth by the workflow's own parser). */
  workflow: ScheduledWorkflow;
  request: Record<string, unknown>;
  description?: string;
}

/** The bus the workflows publish their status events to (detail-types: core/events/status-events.ts). */
export class RolloutEvents extends Construct {
  readonly bus: EventBus;

  constructor(scope: Construct, id: string, props: { removalPolicy?: RemovalPolicy } = {}) {
    super(scope, id);
    this.bus = new EventBus(this, 'Bus', { description: 'baremetal-rollout status events (source baremetal-rollout)' });
    if (props.removalPolicy) this.bus.applyRemovalPolicy(props.removalPolicy);
  }

  /** events:PutEvents on this bus only. */
  grantPublish(...grantees: IGrantable[]): void {
    for (const grantee of grantees) this.bus.grantPutEventsTo(grantee);
  }
}

export interface RolloutSchedulesProps {
  /** The state machines a schedule may start (its target: StartExecution with the stored request). */
  stateMachines: readonly IStateMachine[];
  /** Schedules to create in the group with the stack; each starts its workflow's state machine. */
  declared?: readonly DeclaredSchedule[];
  /** The state machine a declared schedule of each workflow starts. */
  targets?: Readonly<Record<ScheduledWorkflow, IStateMachine>>;
  /** What happens to the group (and the schedules in it) when it leaves the stack. */
  removalPolicy?: RemovalPolicy;
}

/**
 * The EventBridge Scheduler group `rollout schedule` creates schedules in, and the role those
 * schedules run as: states:StartExecution on the given state machines only, assumable by the
 * scheduler only for schedules of this group in this account.
 */
export class RolloutSchedules extends Construct {
  readonly group: CfnScheduleGroup;
  readonly groupName: string;
  readonly role: Role;

  constructor(scope: Construct, id: string, props: RolloutSchedulesProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.groupName = `${stack.stackName}-schedules`.slice(0, 64);
    this.group = new CfnScheduleGroup(this, 'Group', { name: this.groupName });
    if (props.removalPolicy) this.group.applyRemovalPolicy(props.removalPolicy);
    // EventBridge Scheduler sets aws:SourceArn to the schedule GROUP's ARN (its confused-deputy guide: never a
    // schedule or a name prefix), so a `schedule/<group>/*` pattern would never match and no schedule could run.
    this.role = new Role(this, 'Role', {
      description: 'Runs rollout schedules: starts the rollout state machines',
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account }, ArnEquals: { 'aws:SourceArn': this.group.attrArn } },
      }),
    });
    for (const stateMachine of props.stateMachines) stateMachine.grantStartExecution(this.role);
    for (const declared of props.declared ?? []) this.declare(declared, props.targets);
  }

  /** One declared schedule, refused at synth (naming the schedule and the field) if its timing or request is bad. */
  private declare(declared: DeclaredSchedule, targets: RolloutSchedulesProps['targets']): void {
    const timeZone = declared.timeZone ?? 'UTC';
    const input = JSON.stringify(declared.request);
    const problems = scheduleTimingProblems({
      name: declared.name,
      scheduleExpression: declared.expression,
      timeZone,
      ...(declared.flexibleWindowMinutes !== undefined ? { flexibleWindowMinutes: declared.flexibleWindowMinutes } : {}),
    });
    try {
      parseScheduledRequest(declared.workflow, input);
    } catch (err) {
      if (!(err instanceof InvalidInputError)) throw err;
      problems.push(...err.problems.map((problem) => ({ ...problem, field: `request${problem.field ? `.${problem.field}` : ''}` })));
    }
    if (problems.length > 0) throw new InvalidInputError(`schedule '${declared.name}'`, problems);
    const target = targets?.[declared.workflow];
    if (!target) throw new InvalidInputError(`schedule '${declared.name}'`, [{ field: 'workflow', message: `no state machine for ${declared.workflow}` }]);
    const schedule = new CfnSchedule(this, `Schedule-${declared.name}`, {
      name: declared.name,
      groupName: this.groupName,
      scheduleExpression: declared.expression,
      scheduleExpressionTimezone: timeZone,
      flexibleTimeWindow: declared.flexibleWindowMinutes ? { mode: 'FLEXIBLE', maximumWindowInMinutes: declared.flexibleWindowMinutes } : { mode: 'OFF' },
      ...(declared.description ? { description: declared.description } : {}),
      target: { arn: target.stateMachineArn, roleArn: this.role.roleArn, input },
    });
    schedule.addResourceDependency(this.group);
  }
}
