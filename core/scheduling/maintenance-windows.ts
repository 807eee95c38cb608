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
