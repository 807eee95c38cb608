import { nextFiring, parseScheduleExpression } from '../../../core/run-schedules/schedule-expression';

const T0 = Date.parse('2026-01-01T00:00:00Z'); // a Thursday
const next = (text: string, timeZone = 'UTC', after = T0) => {
  const at = nextFiring(parseScheduleExpression(text, 'scheduleExpression', timeZone), timeZone, after, T0);
  return at === undefined ? undefined : new Date(at).toISOString();
};

describe('schedule expressions, read as EventBridge Scheduler reads them', () => {
  it('cron: six fields, day-of-week 1-7 from Sunday, in the time zone', () => {
    expect(next('cron(30 2 ? * MON-FRI *)')).toBe('2026-01-01T02:30:00.000Z');
    expect(next('cron(0 3 ? * 1 *)')).toBe('2026-01-04T03:00:00.000Z');
    expect(next('cron(0 3 ? * SUN *)')).toBe('2026-01-04T03:00:00.000Z');
    expect(next('cron(0 2 * * ? *)', 'Europe/Paris')).toBe('2026-01-01T01:00:00.000Z');
    expect(next('cron(0/15 * * * ? *)')).toBe('2026-01-01T00:15:00.000Z');
    expect(next('cron(0 0 1 1 ? 2027)')).toBe('2027-01-01T00:00:00.000Z');
  });

  it('rate: from the start, strictly after; at: once, in the time zone', () => {
    expect(next('rate(5 minutes)')).toBe('2026-01-01T00:05:00.000Z');
    expect(next('rate(1 hour)', 'UTC', T0 + 90 * 60_000)).toBe('2026-01-01T02:00:00.000Z');
    expect(next('at(2026-01-01T01:00:00)')).toBe('2026-01-01T01:00:00.000Z');
    expect(next('at(2026-01-01T02:00:00)', 'Europe/Paris')).toBe('2026-01-01T01:00:00.000Z');
    expect(next('at(2026-01-01T01:00:00)', 'Europe/Paris')).toBeUndefined();
  });

  it.each([
    ['cron(0 3 * * 1 *)', 'exactly one of day-of-month and day-of-week must be ?'],
    ['cron(0 3 ? * 1)', 'six fields'],
    ['cron(99 3 ? * 1 *)', 'minute'],
    ['rate(0 minutes)', 'at least 1'],
    ['rate(1 minutes)', 'rate(1 minute)'],
    ['at(2026-13-01T00:00:00)', 'not a date'],
    ['every day', 'must be cron(...), rate(...) or at(...)'],
    // A maintenance window's 5-field cron, given here: said so, with the EventBridge form to write.
    [
      '0 22 * * *',
      "a 5-field cron is a maintenance window's form, --maintenance-window; a schedule takes EventBridge's cron(minutes hours day-of-month month day-of-week year): write cron(0 22 * * ? *)",
    ],
    [
      '0 22 * * 1',
      "a 5-field cron is a maintenance window's form, --maintenance-window; a schedule takes EventBridge's cron(minutes hours day-of-month month day-of-week year))",
    ],
  ])('refuses %s, naming the field', (text, message) => {
    expect(() => parseScheduleExpression(text)).toThrow(expect.objectContaining({ name: 'InvalidInputError', message: expect.stringContaining(message) }));
    expect(() => parseScheduleExpression(text)).toThrow('scheduleExpression');
  });
});
