import { Cron } from 'croner';
import { InvalidInputError, type FieldProblem } from '../errors';

/**
 * An EventBridge Scheduler expression, read the way the service reads it:
 * - `cron(minutes hours day-of-month month day-of-week year)`: six fields, day-of-week 1-7 or
 *   SUN-SAT (1 = Sunday), one of day-of-month and day-of-week `?`; in the schedule's time zone;
 * - `rate(value unit)`: every `value` minutes, hours or days from the schedule's start;
 * - `at(yyyy-mm-ddThh:mm:ss)`: once, at that local time of the schedule's time zone.
 */
export type ScheduleExpression =
  | { kind: 'cron'; text: string; fields: string }
  | { kind: 'rate'; text: string; everyMs: number }
  | { kind: 'at'; text: string; localTime: string };

const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const AT = /^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/;
const CRON = /^cron\((.+)\)$/;
const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** Reads `text` or throws an InvalidInputError naming `field`. */
export function parseScheduleExpression(text: string, field = 'scheduleExpression', timeZone = 'UTC'): ScheduleExpression {
  const problem = (message: string): never => {
    throw new InvalidInputError('schedule', [{ field, message }]);
  };
  const rate = RATE.exec(text);
  if (rate) {
    const value = Number(rate[1]);
    const unit = rate[2]!.replace(/s$/, '');
    if (value < 1) problem('a rate must be at least 1');
    if ((value === 1) !== (rate[2] === unit)) problem(`write rate(1 ${unit}) or rate(n ${unit}s)`);
    return { kind: 'rate', text, everyMs: value * UNIT_MS[unit]! };
  }
  const at = AT.exec(text);
  if (at) {
    const expression: ScheduleExpression = { kind: 'at', text, localTime: at[1]! };
    if (Number.isNaN(Date.parse(`${at[1]}Z`))) problem(`'${at[1]}' is not a date and time`);
    checkCron(expression, timeZone, field);
    return expression;
  }
  const cron = CRON.exec(text);
  if (cron) {
    const fields = cron[1]!.trim().split(/\s+/);
    if (fields.length !== 6) problem('cron(...) takes six fields: minutes hours day-of-month month day-of-week year');
    const [, , dayOfMonth, , dayOfWeek] = fields;
    if ((dayOfMonth === '?') === (dayOfWeek === '?')) problem('in cron(...), exactly one of day-of-month and day-of-week must be ?');
    const expression: ScheduleExpression = { kind: 'cron', text, fields: fields.join(' ') };
    checkCron(expression, timeZone, field);
    return expression;
  }
  return problem(`must be cron(...), rate(...) or at(...), got '${text}'${fiveFieldCronHint(text)}`);
}

/**
 * A plain 5-field cron is what a maintenance window takes; given here, say so and, where the meaning
 * carries over unchanged (any day of the week), the EventBridge form to write.
 */
function fiveFieldCronHint(text: string): string {
  const fields = text.trim().split(/\s+/);
  if (fields.length !== 5) return '';
  const [minutes, hours, dayOfMonth, month, dayOfWeek] = fields;
  const instead = dayOfWeek === '*' ? `: write cron(${minutes} ${hours} ${dayOfMonth} ${month} ? *)` : '';
  return ` (a 5-field cron is a maintenance window's form, --maintenance-window; a schedule takes EventBridge's cron(minutes hours day-of-month month day-of-week year)${instead})`;
}

/** Checks that the time zone is one the runtime knows (IANA names: Europe/Paris, America/New_York, UTC). */
export function timeZoneProblems(timeZone: string, field = 'scheduleExpressionTimezone'): FieldProblem[] {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return [];
  } catch {
    return [{ field, message: `'${timeZone}' is not a known time zone (an IANA name such as Europe/Paris, or UTC)` }];
  }
}

/**
 * The first firing strictly after `after` (epoch ms), or undefined when there is none (a one-time
 * schedule whose time has passed). A rate counts from `startMs` (the schedule's start or creation).
 */
export function nextFiring(expression: ScheduleExpression, timeZone: string, after: number, startMs: number): number | undefined {
  if (expression.kind === 'rate') {
    const periods = Math.floor((after - startMs) / expression.everyMs) + 1;
    return startMs + Math.max(1, periods) * expression.everyMs;
  }
  const next = croner(expression, timeZone).nextRun(new Date(after));
  return next ? next.getTime() : undefined;
}

function croner(expression: Exclude<ScheduleExpression, { kind: 'rate' }>, timeZone: string): Cron {
  if (expression.kind === 'at') return new Cron(expression.localTime, { timezone: timeZone, paused: true });
  // EventBridge's six fields are croner's seven-field Quartz form with the seconds at 0.
  return new Cron(`0 ${expression.fields}`, {
    timezone: timeZone,
    paused: true,
    mode: '7-part',
    alternativeWeekdays: true,
    sloppyRanges: true,
    domAndDow: false,
  });
}

function checkCron(expression: Exclude<ScheduleExpression, { kind: 'rate' }>, timeZone: string, field: string): void {
  if (timeZoneProblems(timeZone).length > 0) return;
  try {
    croner(expression, timeZone);
  } catch (err) {
    throw new InvalidInputError('schedule', [{ field, message: err instanceof Error ? err.message : String(err) }], { cause: err });
  }
}
