import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidInputError } from '../core/errors';
import type { ScheduleRecord } from '../core/run-schedules/schedule';
import { LOCAL_SCHEDULE_GROUP, type LocalScheduler } from './local-scheduler';
import type { WallClock } from '../time/wall-clock';

const LOCAL_ACCOUNT = '000000000000';
const SCHEDULES = /^\/schedules(?:\/([^/?]+))?$/;
const DEFAULT_PAGE = 100;

class SchedulerError extends Error {
  constructor(
    readonly type: 'ValidationException' | 'ConflictException' | 'ResourceNotFoundException',
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * An EventBridge Scheduler-compatible endpoint (REST JSON: CreateSchedule, GetSchedule,
 * ListSchedules, DeleteSchedule) over the local scheduler, so the real `@aws-sdk/client-scheduler`
 * with an endpoint override manages a `rollout serve`'s schedules as it manages the stack's.
 * Served on the Step Functions endpoint's port: its paths (/schedules...) do not collide.
 */
export class SchedulerEndpoint {
  constructor(
    private readonly scheduler: LocalScheduler,
    /** The schedules' clock (the wall clock): creation and modification dates. */
    private readonly clock: Pick<WallClock, 'now'>,
    private readonly region: string,
  ) {}

  /** Handles the request if it is one of this API's; false to let another route answer. */
  async route(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const url = new URL(req.url ?? '/', 'http://local');
    const match = SCHEDULES.exec(url.pathname);
    if (!match || req.headers['x-amz-target'] !== undefined) return false;
    const name = match[1] === undefined ? undefined : decodeURIComponent(match[1]);
    try {
      const body = await readJson(req);
      let answer: unknown;
      if (name === undefined && req.method === 'GET') answer = await this.list(url.searchParams);
      else if (name !== undefined && req.method === 'POST') answer = await this.create(name, body);
      else if (name !== undefined && req.method === 'GET') answer = await this.get(name, url.searchParams.get('groupName') ?? 'default');
      else if (name !== undefined && req.method === 'DELETE') answer = await this.delete(name, url.searchParams.get('groupName') ?? 'default');
      else throw new SchedulerError('ValidationException', 400, `${req.method} ${url.pathname} is not an operation of this endpoint`);
      send(res, 200, answer);
    } catch (err) {
      if (err instanceof SchedulerError) send(res, err.status, { Message: err.message }, err.type);
      else if (err instanceof InvalidInputError) send(res, 400, { Message: err.message }, 'ValidationException');
      else send(res, 500, { Message: err instanceof Error ? err.message : String(err) }, 'InternalServerException');
    }
    return true;
  }

  private arn(record: Pick<ScheduleRecord, 'groupName' | 'name'>): string {
    return `arn:aws:scheduler:${this.region}:${LOCAL_ACCOUNT}:schedule/${record.groupName}/${record.name}`;
  }

  private async create(name: string, body: Record<string, unknown>): Promise<unknown> {
    const groupName = optionalString(body, 'GroupName') ?? 'default';
    this.knownGroup(groupName);
    const target = (body.Target ?? {}) as Record<string, unknown>;
    const window = (body.FlexibleTimeWindow ?? {}) as Record<string, unknown>;
    const mode = optionalString(window, 'Mode', 'FlexibleTimeWindow.Mode');
    if (mode !== 'OFF' && mode !== 'FLEXIBLE') throw new SchedulerError('ValidationException', 400, "FlexibleTimeWindow.Mode must be 'OFF' or 'FLEXIBLE'");
    const maximum = window.MaximumWindowInMinutes;
    if (mode === 'FLEXIBLE' && typeof maximum !== 'number')
      throw new SchedulerError('ValidationException', 400, 'FlexibleTimeWindow.MaximumWindowInMinutes is required in FLEXIBLE mode');
    const state = optionalString(body, 'State') ?? 'ENABLED';
    if (state !== 'ENABLED' && state !== 'DISABLED') throw new SchedulerError('ValidationException', 400, "State must be 'ENABLED' or 'DISABLED'");
    const after = optionalString(body, 'ActionAfterCompletion') ?? 'NONE';
    if (after !== 'NONE' && after !== 'DELETE') throw new SchedulerError('ValidationException', 400, "ActionAfterCompletion must be 'NONE' or 'DELETE'");
    const now = this.clock.now();
    const description = optionalString(body, 'Description');
    const record: ScheduleRecord = {
      name,
      groupName,
      scheduleExpression: requiredString(body, 'ScheduleExpression'),
      timeZone: optionalString(body, 'ScheduleExpressionTimezone') ?? 'UTC',
      ...(mode === 'FLEXIBLE' ? { flexibleWindowMinutes: maximum as number } : {}),
      state,
      ...(description !== undefined ? { description } : {}),
      ...(typeof body.StartDate === 'number' ? { startDate: body.StartDate * 1000 } : {}),
      ...(typeof body.EndDate === 'number' ? { endDate: body.EndDate * 1000 } : {}),
      target: {
        arn: requiredString(target, 'Arn', 'Target.Arn'),
        roleArn: requiredString(target, 'RoleArn', 'Target.RoleArn'),
        input: optionalString(target, 'Input', 'Target.Input') ?? '{}',
      },
      actionAfterCompletion: after,
      createdAt: now,
      lastModifiedAt: now,
    };
    if (!(await this.scheduler.create(record))) throw new SchedulerError('ConflictException', 409, `Schedule ${name} already exists.`);
    return { ScheduleArn: this.arn(record) };
  }

  private async get(name: string, groupName: string): Promise<unknown> {
    const record = await this.scheduler.get(groupName, name);
    if (!record) throw new SchedulerError('ResourceNotFoundException', 404, `Schedule ${name} does not exist.`);
    return {
      Arn: this.arn(record),
      Name: record.name,
      GroupName: record.groupName,
      ScheduleExpression: record.scheduleExpression,
      ScheduleExpressionTimezone: record.timeZone,
      State: record.state,
      ...(record.description !== undefined ? { Description: record.description } : {}),
      ...(record.startDate !== undefined ? { StartDate: record.startDate / 1000 } : {}),
      ...(record.endDate !== undefined ? { EndDate: record.endDate / 1000 } : {}),
      CreationDate: record.createdAt / 1000,
      LastModificationDate: record.lastModifiedAt / 1000,
      Target: { Arn: record.target.arn, RoleArn: record.target.roleArn, Input: record.target.input },
      FlexibleTimeWindow:
        record.flexibleWindowMinutes === undefined ? { Mode: 'OFF' } : { Mode: 'FLEXIBLE', MaximumWindowInMinutes: record.flexibleWindowMinutes },
      ActionAfterCompletion: record.actionAfterCompletion,
    };
  }

  private async list(query: URLSearchParams): Promise<unknown> {
    const group = query.get('ScheduleGroup') ?? undefined;
    const prefix = query.get('NamePrefix') ?? '';
    const state = query.get('State');
    const records = (await this.scheduler.list(group)).filter((r) => r.name.startsWith(prefix) && (!state || r.state === state));
    const offset = Number(query.get('NextToken') ?? 0);
    const max = Number(query.get('MaxResults') ?? DEFAULT_PAGE) || DEFAULT_PAGE;
    const page = records.slice(offset, offset + max);
    return {
      Schedules: page.map((record) => ({
        Arn: this.arn(record),
        Name: record.name,
        GroupName: record.groupName,
        State: record.state,
        CreationDate: record.createdAt / 1000,
        LastModificationDate: record.lastModifiedAt / 1000,
        Target: { Arn: record.target.arn },
      })),
      ...(offset + max < records.length ? { NextToken: String(offset + max) } : {}),
    };
  }

  private async delete(name: string, groupName: string): Promise<unknown> {
    if (!(await this.scheduler.delete(groupName, name))) throw new SchedulerError('ResourceNotFoundException', 404, `Schedule ${name} does not exist.`);
    return {};
  }

  private knownGroup(groupName: string): void {
    if (groupName !== LOCAL_SCHEDULE_GROUP && groupName !== 'default') {
      throw new SchedulerError(
        'ResourceNotFoundException',
        404,
        `Schedule group ${groupName} does not exist (this control plane has '${LOCAL_SCHEDULE_GROUP}' and 'default').`,
      );
    }
  }
}

function requiredString(body: Record<string, unknown>, key: string, field = key): string {
  const value = optionalString(body, key, field);
  if (value === undefined || value === '') throw new SchedulerError('ValidationException', 400, `${field} is required`);
  return value;
}

function optionalString(body: Record<string, unknown>, key: string, field = key): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new SchedulerError('ValidationException', 400, `${field} must be a string`);
  return value;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  req.setEncoding('utf8');
  for await (const chunk of req) text += chunk as string;
  if (!text) return {};
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new SchedulerError('ValidationException', 400, 'the request body is not JSON');
  }
}

function send(res: ServerResponse, status: number, body: unknown, errorType?: string): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
  });
  res.end(text);
}
