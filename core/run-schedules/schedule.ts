import { z } from 'zod';
import { InvalidInputError, type FieldProblem } from '../errors';
import { parseDeploymentRequest } from '../group-deployment/deployment-request';
import { parseUpgradeRequest, unsupportedControls } from '../rolling-upgrade/upgrade-request';
import { parseScheduleExpression, timeZoneProblems } from './schedule-expression';

/** What a schedule starts: an upgrade or a deployment, with the request stored in the schedule. */
export type ScheduledWorkflow = 'rollingUpgrade' | 'groupDeployment';

/**
 * A schedule as EventBridge Scheduler keeps it (the fields the rollout uses): the target is a
 * state machine's StartExecution with `input` as the execution input.
 */
export interface ScheduleRecord {
  name: string;
  groupName: string;
  scheduleExpression: string;
  timeZone: string;
  /** Minutes the firing may drift after its time (EventBridge's FLEXIBLE mode); absent: OFF. */
  flexibleWindowMinutes?: number;
  state: 'ENABLED' | 'DISABLED';
  description?: string;
  /** Epoch ms: no firing before / after. */
  startDate?: number;
  endDate?: number;
  target: { arn: string; roleArn: string; input: string };
  actionAfterCompletion: 'NONE' | 'DELETE';
  createdAt: number;
  lastModifiedAt: number;
}

/** EventBridge's name rule for schedules and groups. */
export const SCHEDULE_NAME = /^[0-9a-zA-Z-_.]{1,64}$/;

/**
 * Validates a schedule's request with the parser the workflow itself runs (Open Session, Start
 * Deployment), so a bad request is refused at create time naming its field, not at 3 a.m.
 */
export function parseScheduledRequest(workflow: ScheduledWorkflow, inputText: string): unknown {
  let input: unknown;
  try {
    input = JSON.parse(inputText);
  } catch (err) {
    throw new InvalidInputError('scheduled request', [{ field: '', message: 'the request is not JSON' }], { cause: err });
  }
  if (workflow === 'rollingUpgrade') {
    const unsupported = unsupportedControls(parseUpgradeRequest(input));
    if (unsupported.length > 0) throw new InvalidInputError('upgrade request', unsupported);
  } else {
    parseDeploymentRequest(input);
  }
  return input;
}

const flexibleWindow = z
  .number()
  .int('flexibleWindowMinutes must be whole minutes')
  .min(1, 'flexibleWindowMinutes must be at least 1')
  .max(1440, 'flexibleWindowMinutes must be at most 1440');

/** Checks the timing fields of a schedule, naming each bad one. */
export function scheduleTimingProblems(record: Pick<ScheduleRecord, 'name' | 'scheduleExpression' | 'timeZone' | 'flexibleWindowMinutes'>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!SCHEDULE_NAME.test(record.name))
    problems.push({ field: 'name', message: `must be 1-64 letters, digits, '-', '_' or '.', got '${record.name.slice(0, 80)}'` });
  problems.push(...timeZoneProblems(record.timeZone));
  if (problems.length === 0) {
    try {
      parseScheduleExpression(record.scheduleExpression, 'scheduleExpression', record.timeZone);
    } catch (err) {
      if (!(err instanceof InvalidInputError)) throw err;
      problems.push(...err.problems);
    }
  }
  if (record.flexibleWindowMinutes !== undefined) {
    const parsed = flexibleWindow.safeParse(record.flexibleWindowMinutes);
    if (!parsed.success) problems.push({ field: 'flexibleWindowMinutes', message: parsed.error.issues[0]!.message });
  }
  return problems;
}
