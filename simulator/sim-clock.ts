import { performance } from 'node:perf_hooks';
import type { Clock } from '../core/clock';

export interface SimClockOptions {
  /** Simulated seconds per real second, e.g. 1000. */
  timeScale: number;
  /** Simulated epoch ms at creation. Default 2026-01-01T00:00:00Z. */
  startAt?: number;
  /** Real monotonic time in ms; injectable so tests can step time by hand. Default performance.now. */
  realNow?: () => number;
}

/** Simulated time that runs `timeScale` times faster than real time. */
export class SimClock implements Clock {
  readonly timeScale: number;
  readonly startAt: number;
  private readonly realNow: () => number;
  private readonly realStart: number;

  constructor({ timeScale, startAt = Date.UTC(2026, 0, 1), realNow = () => performance.now() }: SimClockOptions) {
    if (!(timeScale > 0) || !Number.isFinite(timeScale)) throw new RangeError(`timeScale must be a positive number, got ${timeScale}`);
    this.timeScale = timeScale;
    this.startAt = startAt;
    this.realNow = realNow;
    this.realStart = realNow();
  }

  /** Simulated epoch ms, whole (the site APIs and Slurm's boot_time deal in whole units). */
  now(): number {
    return this.startAt + Math.floor((this.realNow() - this.realStart) * this.timeScale);
  }

  /** Real milliseconds that `simSeconds` of simulated time take. */
  realMsFor(simSeconds: number): number {
    return (simSeconds * 1000) / this.timeScale;
  }
}
