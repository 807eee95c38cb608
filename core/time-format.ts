/**
 * Durations and instants as the project shows them, in one place: one text form (`1h 36m`, `6m 0s`)
 * and one JSON shape for an instant on simulated time. A simulated instant is never a date: its
 * epoch (2026-01-01 by default) means nothing to a reader, so it is shown as the time since its run
 * started (`+1h 36m (simulated)`, `{"secondsFromStart": 5760, "timeBase": "simulated"}`). Wall-clock
 * instants stay dates (ISO 8601 in JSON, `2026-01-01 09:30:00Z` in text).
 */

import { z } from 'zod';

/** Which clock a run's instants are on. */
export type TimeBase = 'wall-clock' | 'simulated';

/** An instant on simulated time, as JSON shows it: seconds since its run started (to the millisecond). */
export interface SimulatedInstant {
  secondsFromStart: number;
  timeBase: 'simulated';
}

/** An instant as JSON shows it: an ISO date on the wall clock, a `SimulatedInstant` on simulated time. */
export type ShownInstant = string | SimulatedInstant;

/** `ShownInstant` as the API's schemas (OpenAPI) describe it. */
export const shownInstantSchema = z
  .union([
    z.string().describe('A wall-clock instant: an ISO 8601 date'),
    z
      .object({
        secondsFromStart: z.number().describe("Seconds from the run's start"),
        timeBase: z.literal('simulated').describe("Always simulated: the instant is on a simulated site's clock"),
      })
      .describe("An instant on simulated time (a simulated site's clock): seconds from its run's start, never a date"),
  ])
  .meta({ id: 'Instant' });

/** The clock a run's stored instants (ISO strings, on that clock) are read against. */
export interface RunClock {
  timeBase: TimeBase;
  /** When the run started, on its own clock (ISO): simulated instants count from here. */
  startedAt: string;
}

/** `1h 36m` (an hour or more), `6m 0s`, `45s`; rounded to the whole second once (1799.9 s is `30m 0s`). */
export function formatDuration(seconds: number): string {
  const total = Math.round(Math.abs(seconds));
  const sign = seconds < 0 && total > 0 ? '-' : '';
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return sign + (h > 0 ? `${h}h ${m}m` : m > 0 ? `${m}m ${s}s` : `${s}s`);
}

/**
 * How long until a gate opens (a maintenance window, a bake), in the same units, rounded up: `45s`,
 * `12m` (to the minute past a minute), `3h 20m`, `41d 2h` (past two days).
 */
export function formatWait(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return `${s}s`;
  const minutes = Math.ceil(s / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h${minutes % 60 ? ` ${minutes % 60}m` : ''}`;
  return `${Math.floor(hours / 24)}d${hours % 24 ? ` ${hours % 24}h` : ''}`;
}

/** `+1h 36m`: an offset from a run's start (for tables whose header says which clock). */
export function formatOffset(seconds: number): string {
  return seconds < 0 ? formatDuration(seconds) : `+${formatDuration(seconds)}`;
}

/** `2026-01-01 09:30:00Z`: a wall-clock instant, to the second. */
export function formatWallInstant(at: string | number): string {
  return new Date(at)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** The JSON form of an instant of a run stored as ISO on the run's clock. */
export function showInstant(at: string, clock: RunClock): ShownInstant {
  if (clock.timeBase === 'wall-clock') return at;
  return simulatedInstant(Date.parse(at), Date.parse(clock.startedAt));
}

/** An instant on simulated time (epoch ms) counted from its run's start (epoch ms, same clock). */
export function simulatedInstant(atMs: number, startMs: number): SimulatedInstant {
  return { secondsFromStart: Math.round(atMs - startMs) / 1000, timeBase: 'simulated' };
}

/** The text form of a shown instant: `2026-01-01 09:30:00Z`, or `+1h 36m (simulated)`. */
export function formatShownInstant(at: ShownInstant): string {
  return typeof at === 'string' ? formatWallInstant(at) : `${formatOffset(at.secondsFromStart)} (simulated)`;
}

/** The text form of an instant of a run stored as ISO on the run's clock (see `formatShownInstant`). */
export function formatRunInstant(at: string, clock: RunClock): string {
  return formatShownInstant(showInstant(at, clock));
}

/** Whether a value is the JSON form of a simulated instant (for readers of JSON: the CLI over REST). */
export function isSimulatedInstant(value: unknown): value is SimulatedInstant {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as SimulatedInstant).timeBase === 'simulated' &&
    typeof (value as SimulatedInstant).secondsFromStart === 'number'
  );
}
