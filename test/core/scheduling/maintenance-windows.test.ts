import { neverOpensProblem } from '../../../core/scheduling';

/** Issue 26, item 5: a maintenance window must open within a year of the request, or the run would wait for ever. */
describe('neverOpensProblem', () => {
  const from = Date.parse('2026-01-01T00:00:00Z');
  const window = (cron: string, timeZone = 'UTC') => ({ cron, durationMinutes: 60, timeZone });

  it('refuses a cron that matches no date (30 February, 31 April)', () => {
    expect(neverOpensProblem(window('0 0 30 2 *'), from)).toBe(
      "cron '0 0 30 2 *' opens no maintenance window in the next year (from 2026-01-01T00:00:00.000Z): it matches no date at all, so no node would ever start",
    );
    expect(neverOpensProblem(window('0 0 31 4 *'), from)).toMatch(/it matches no date at all/);
  });

  it('refuses one whose next opening is more than a year away, and takes the same one when it is within a year', () => {
    expect(neverOpensProblem(window('0 0 29 2 *'), from)).toMatch(/its next opening is 2028-02-29T00:00:00\.000Z/);
    expect(neverOpensProblem(window('0 0 29 2 *'), Date.parse('2027-06-01T00:00:00Z'))).toBeUndefined();
  });

  it('takes windows that open soon, in any time zone', () => {
    expect(neverOpensProblem(window('0 3 * * *'), from)).toBeUndefined();
    expect(neverOpensProblem(window('0 0 1 1 *', 'Europe/Zurich'), from)).toBeUndefined();
    expect(neverOpensProblem(window('30 */2 * * 6'), from)).toBeUndefined();
  });
});
