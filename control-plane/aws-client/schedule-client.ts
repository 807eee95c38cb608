import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  ResourceNotFoundException,
  ValidationException,
  type SchedulerClient,
  type GetScheduleCommandOutput,
} from '@aws-sdk/client-scheduler';
import { InvalidInputError } from '../../core/errors';
import { parseScheduledRequest, scheduleTimingProblems, type ScheduledWorkflow } from '../../core/run-schedules/schedule';

/** What `rollout schedule create` asks for. */
export interface ScheduleRequest {
  name: string;
  workflow: ScheduledWorkflow;
  /** The stored request: the execution input of every firing. */
  request: unknown;
  scheduleExpression: string;
  timeZone?: string;
  flexibleWindowMinutes?: number;
  description?: string;
  /** Delete the schedule after its last firing (one-time schedules). */
  deleteAfterCompletion?: boolean;
}

export interface ScheduleSummary {
  name: string;
  groupName: string;
  state: string;
  targetArn: string;
  workflow?: ScheduledWorkflow;
}

export type ScheduleDetails = GetScheduleCommandOutput;

/** The group a schedule goes in, the role EventBridge Scheduler assumes, the state machines: from the stack's outputs or `rollout serve`'s first line. */
export interface ScheduleTarget {
  scheduleGroup?: string;
  schedulerRoleArn?: string;
  stateMachines: Readonly<Record<ScheduledWorkflow, string>>;
}

/**
 * Schedules through `@aws-sdk/client-scheduler`: the stack's EventBridge Scheduler group on AWS,
 * a `rollout serve`'s Scheduler-compatible endpoint otherwise. One code path; the request is
 * checked first with the parsers the workflows use, so a bad one names its field before anything
 * is created.
 */
export class ScheduleClient {
  constructor(
    readonly scheduler: SchedulerClient,
    private readonly target: ScheduleTarget,
  ) {}

  private get group(): string {
    if (!this.target.scheduleGroup || !this.target.schedulerRoleArn) {
      throw new Error('this control plane has no schedule group: redeploy the stack (infra/) so that it outputs ScheduleGroupName and SchedulerRoleArn');
    }
    return this.target.scheduleGroup;
  }

  async create(request: ScheduleRequest): Promise<string> {
    const timeZone = request.timeZone ?? 'UTC';
    const problems = scheduleTimingProblems({
      name: request.name,
      scheduleExpression: request.scheduleExpression,
      timeZone,
      ...(request.flexibleWindowMinutes !== undefined ? { flexibleWindowMinutes: request.flexibleWindowMinutes } : {}),
    });
    if (problems.length > 0) throw new InvalidInputError('schedule', problems);
    const input = JSON.stringify(request.request);
    parseScheduledRequest(request.workflow, input);
    const groupName = this.group;
    try {
      const created = await this.scheduler.send(
        new CreateScheduleCommand({
          Name: request.name,
          GroupName: groupName,
          ScheduleExpression: request.scheduleExpression,
          ScheduleExpressionTimezone: timeZone,
          FlexibleTimeWindow:
            request.flexibleWindowMinutes === undefined ? { Mode: 'OFF' } : { Mode: 'FLEXIBLE', MaximumWindowInMinutes: request.flexibleWindowMinutes },
          Target: { Arn: this.target.stateMachines[request.workflow], RoleArn: this.target.schedulerRoleArn, Input: input },
          ...(request.description ? { Description: request.description } : {}),
          ...(request.deleteAfterCompletion ? { ActionAfterCompletion: 'DELETE' } : {}),
          State: 'ENABLED',
        }),
      );
      return created.ScheduleArn!;
    } catch (err) {
      if (err instanceof ConflictException)
        throw new InvalidInputError('schedule', [{ field: 'name', message: `a schedule named '${request.name}' exists in group ${groupName}` }], {
          cause: err,
        });
      if (err instanceof ValidationException) throw new InvalidInputError('schedule', [{ field: '', message: err.message }], { cause: err });
      throw err;
    }
  }

  async list(): Promise<ScheduleSummary[]> {
    const groupName = this.group;
    const summaries: ScheduleSummary[] = [];
    let nextToken: string | undefined;
    do {
      const page = await this.scheduler.send(new ListSchedulesCommand({ GroupName: groupName, ...(nextToken ? { NextToken: nextToken } : {}) }));
      for (const schedule of page.Schedules ?? []) {
        const targetArn = schedule.Target?.Arn ?? '';
        const workflow = this.workflowOf(targetArn);
        summaries.push({
          name: schedule.Name!,
          groupName: schedule.GroupName ?? groupName,
          state: schedule.State ?? 'ENABLED',
          targetArn,
          ...(workflow ? { workflow } : {}),
        });
      }
      nextToken = page.NextToken;
    } while (nextToken);
    return summaries;
  }

  /** One schedule, or undefined if there is none of that name. */
  async get(name: string): Promise<ScheduleDetails | undefined> {
    try {
      return await this.scheduler.send(new GetScheduleCommand({ Name: name, GroupName: this.group }));
    } catch (err) {
      if (err instanceof ResourceNotFoundException) return undefined;
      throw err;
    }
  }

  /** False if there was no schedule of that name. */
  async delete(name: string): Promise<boolean> {
    try {
      await this.scheduler.send(new DeleteScheduleCommand({ Name: name, GroupName: this.group }));
      return true;
    } catch (err) {
      if (err instanceof ResourceNotFoundException) return false;
      throw err;
    }
  }

  workflowOf(arn: string): ScheduledWorkflow | undefined {
    return (Object.entries(this.target.stateMachines) as [ScheduledWorkflow, string][]).find(([, machine]) => machine === arn)?.[0];
  }

  close(): void {
    this.scheduler.destroy();
  }
}
