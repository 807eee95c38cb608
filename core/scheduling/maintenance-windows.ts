import { Cron } from 'croner';

/** A recurring window in which new nodes may start: opens at each cron match, lasts `durationMinutes`. */
export interface MaintenanceWindow {
  /** Five- or six-field cron (croner syntax), read in `timeZone`. */
  cron: string;
  durationMinutes: number;
  /** IANA time zone, e.g. `Europe/Zurich`. Default UTC. */
  timeZone?: string;
}

export type WindowStatus = { open: true; closesAt: number } | { open: false; opensAt: number | undefined };

/** A paused croner job computes matches without ever scheduling a timer: pure. Throws on a bad pattern or zone. */
export function compileWindow(window: MaintenanceWindow): Cron {
  return new Cron(window.cron, { timezone: window.timeZone ?? 'UTC', paused: true });
}

/** How far ahead a maintenance window must open at least once: a request whose window does not is refused. */
export const MAINTENANCE_WINDOW_HORIZON_MS = 366 * 24 * 3600 * 1000;

/**
 * Why `window` is refused, or undefined when it opens within MAINTENANCE_WINDOW_HORIZON_MS of `from`
 * (epoch ms): a cron that matches no date (30 February), or not within a year (29 February, three
 * years out), would leave a run waiting for ever, starting nothing. The cron must compile.
 */
export function neverOpensProblem(window: MaintenanceWindow, from: number): string | undefined {
  const next = compileWindow(window).nextRun(new Date(from))?.getTime();
  if (next !== undefined && next - from <= MAINTENANCE_WINDOW_HORIZON_MS) return undefined;
  const when = next === undefined ? 'it matches no date at all' : `its next opening is ${new Date(next).toISOString()}`;
  return `cron '${window.cron}' opens no maintenance window in the next year (from ${new Date(from).toISOString()}): ${when}, so no node would ever start`;
}

/**
 * Whether `now` (epoch ms) falls inside one of `windows`. A window that opened at s is open on
 * [s, s + duration): so `now` is inside iff the first opening after `now - duration` is at or before `now`.
 */
export function windowStatus(windows: readonly MaintenanceWindow[], now: number): WindowStatus {
  let closesAt: number | undefined;
  let opensAt: number | undefined;
  for (const window of windows) {
    const cron = compileWindow(window);
    const duration = window.durationMinutes * 60_000;
    // nextRun is strictly after its reference, so an opening at exactly now - duration (closed now) is not found.
    const opening = cron.nextRun(new Date(now - duration))?.getTime();
    if (opening !== undefined && opening <= now) {
      closesAt = Math.max(closesAt ?? 0, opening + duration);
      continue;
    }
    // Past `now`, the first opening after now - duration is also the first after now.
    if (opening !== undefined) opensAt = Math.min(opensAt ?? Infinity, opening);
  }
  return closesAt !== undefined ? { open: true, closesAt } : { open: false, opensAt };
}
