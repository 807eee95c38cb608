import { InvalidInputError, type FieldProblem } from '../core/errors';
import { parseScheduledRequest, scheduleTimingProblems, type ScheduledWorkflow, type ScheduleRecord } from '../core/run-schedules/schedule';
import { nextFiring, parseScheduleExpression } from '../core/run-schedules/schedule-expression';
import type { ScheduleStore } from '../ports/schedule-store';
import { localExecutionArn, type LocalStepFunctions } from './local-step-functions';
import type { WallClock } from '../time/wall-clock';

/** The one group of the embedded control plane (the stack's group on AWS). */
export const LOCAL_SCHEDULE_GROUP = 'rollout';
/** The role a local schedule names: accepted and not assumed (nothing checks permissions locally). */
export const LOCAL_SCHEDULER_ROLE_ARN = 'arn:aws:iam::000000000000:role/rollout-scheduler';

/** How late a firing may be and still start its execution. */
const LATE_FIRING_MS = 60_000;

/** What a firing did, for tests and the serve log. */
export interface ScheduleFiring {
  schedule: string;
  at: number;
  executionArn?: string;
  error?: string;
}

/**
 * The embedded control plane's EventBridge Scheduler: schedules kept in the store (a restarted
 * `rollout serve` arms them again), firings computed by croner (core/run-schedules) and slept for on
 * the wall clock, whatever the control plane's clock: a schedule names dates of the operator's
 * calendar (`at()` Christmas, a Mon-Fri cron), so virtual time (which jumps to the next due wait)
 * never fires one early, and a scaled clock never fires one faster. The executions a firing starts
 * run on the control plane's clock as any other. A firing is the schedule's target, StartExecution with the
 * stored request, under an execution name made of the schedule's name and the firing time (a
 * restarted serve firing the same time again starts nothing new). A flexible window fires at its
 * start: local runs are reproducible.
 */
export class LocalScheduler {
  private readonly armed = new Map<string, AbortController>();
  readonly firings: ScheduleFiring[] = [];

  constructor(
    private readonly options: {
      store: ScheduleStore;
      engine: LocalStepFunctions;
      clock: WallClock;
      /** The state machines a schedule may start. */
      stateMachines: Readonly<Record<ScheduledWorkflow, string>>;
    },
  ) {}

  /** Arms every stored schedule (at start of the control plane). */
  async start(): Promise<void> {
    for (const record of await this.options.store.listSchedules()) this.arm(record);
  }

  /** Validates (timing, target, the request with the workflow's own parser), stores, arms; false if the name is taken. */
  async create(record: ScheduleRecord): Promise<boolean> {
    const problems: FieldProblem[] = scheduleTimingProblems(record);
    const workflow = this.workflowOf(record.target.arn);
    if (!workflow)
      problems.push({
        field: 'target.arn',
        message: `'${record.target.arn}' is not a state machine of this control plane (${Object.values(this.options.stateMachines).join(', ')})`,
      });
    if (problems.length > 0) throw new InvalidInputError('schedule', problems);
    parseScheduledRequest(workflow!, record.target.input);
    if (!(await this.options.store.createSchedule(record))) return false;
    this.arm(record);
    return true;
  }

  get(groupName: string, name: string): Promise<ScheduleRecord | undefined> {
    return this.options.store.getSchedule(groupName, name);
  }

  list(groupName?: string): Promise<ScheduleRecord[]> {
    return this.options.store.listSchedules(groupName);
  }

  async delete(groupName: string, name: string): Promise<boolean> {
    this.disarm(groupName, name);
    return this.options.store.deleteSchedule(groupName, name);
  }

  close(): void {
    for (const controller of this.armed.values()) controller.abort();
    this.armed.clear();
  }

  private workflowOf(arn: string): ScheduledWorkflow | undefined {
    return (Object.entries(this.options.stateMachines) as [ScheduledWorkflow, string][]).find(([, machine]) => machine === arn)?.[0];
  }

  private disarm(groupName: string, name: string): void {
    const key = `${groupName}/${name}`;
    this.armed.get(key)?.abort();
    this.armed.delete(key);
  }

  private arm(record: ScheduleRecord): void {
    if (record.state !== 'ENABLED') return;
    this.disarm(record.groupName, record.name);
    const controller = new AbortController();
    const key = `${record.groupName}/${record.name}`;
    this.armed.set(key, controller);
    void this.run(record, controller.signal).finally(() => {
      if (this.armed.get(key) === controller) this.armed.delete(key);
    });
  }

  private async run(record: ScheduleRecord, signal: AbortSignal): Promise<void> {
    const { clock } = this.options;
    const expression = parseScheduleExpression(record.scheduleExpression, 'scheduleExpression', record.timeZone);
    const startMs = record.startDate ?? record.createdAt;
    let after = Math.max(clock.now(), (record.startDate ?? Number.NEGATIVE_INFINITY) - 1);
    for (;;) {
      const at = nextFiring(expression, record.timeZone, after, startMs);
      if (at === undefined || (record.endDate !== undefined && at > record.endDate)) break;
      // Slept in parts until the clock reads `at` (a timer may wake early, and the longest is 24.8 days).
      while (clock.now() < at && !signal.aborted) await clock.sleep(at - clock.now(), signal);
      if (signal.aborted) return;
      // A firing found long past (the host slept, or its clock was set forward) is skipped, not caught up back to back.
      if (clock.now() - at <= LATE_FIRING_MS) this.fire(record, at);
      after = Math.max(at, clock.now());
    }
    if (record.actionAfterCompletion === 'DELETE') await this.options.store.deleteSchedule(record.groupName, record.name);
  }

  private fire(record: ScheduleRecord, at: number): void {
    const executionName = `${record.name.replace(/\./g, '_')}-${Math.floor(at / 1000)}`;
    const firing: ScheduleFiring = { schedule: `${record.groupName}/${record.name}`, at };
    try {
      const { engine } = this.options;
      const arn = localExecutionArn(record.target.arn, executionName);
      if (engine.execution(arn)) {
        firing.executionArn = arn;
      } else {
        const started = engine.start(record.target.arn, JSON.parse(record.target.input), executionName);
        started.outcome.catch(() => undefined);
        firing.executionArn = started.executionArn;
      }
    } catch (err) {
      firing.error = err instanceof Error ? err.message : String(err);
    }
    this.firings.push(firing);
  }
}
