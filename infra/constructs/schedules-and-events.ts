import { Arn, Stack } from 'aws-cdk-lib';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { CfnScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';

/** The bus the workflows publish their status events to (detail-types: core/events/status-events.ts). */
export class RolloutEvents extends Construct {
  readonly bus: EventBus;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bus = new EventBus(this, 'Bus', { description: 'baremetal-rollout status events (source baremetal-rollout)' });
  }

  /** events:PutEvents on this bus only. */
  grantPublish(...grantees: IGrantable[]): void {
    for (const grantee of grantees) this.bus.grantPutEventsTo(grantee);
  }
}

export interface RolloutSchedulesProps {
  /** The state machines a schedule may start (its target: StartExecution with the stored request). */
  stateMachines: readonly IStateMachine[];
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
    const schedulesOfGroup = Arn.format({ service: 'scheduler', resource: 'schedule', resourceName: `${this.groupName}/*` }, stack);
    this.role = new Role(this, 'Role', {
      description: 'Runs rollout schedules: starts the rollout state machines',
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account }, ArnLike: { 'aws:SourceArn': schedulesOfGroup } },
      }),
    });
    for (const stateMachine of props.stateMachines) stateMachine.grantStartExecution(this.role);
  }
}
