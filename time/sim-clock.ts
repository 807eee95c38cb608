import { performance } from 'node:perf_hooks';
import type { Clock } from '../core/clock';

/**
 * Simulated time, shared by the embedded engine and the site simulator: the one source of "now"
 * and of waiting. Two kinds: the wall clock sped up (`SimClock`, for watching a run) and virtual
 * time (`VirtualClock` in time/virtual-clock.ts, which moves only when every execution waits).
 */
export interface TimeSource extends Clock {
  readonly kind: 'scaled' | 'virtual';
  /** Simulated epoch ms at creation. */
  readonly startAt: number;
  /** Simulated epoch ms, whole (the site APIs and Slurm's boot_time deal in whole units). */
  now(): number;
  /** Resolves once `simSeconds` of simulated time have passed, or early (its timer cleared) once `signal` aborts. */
  sleep(simSeconds: number, signal?: AbortSignal): Promise<void>;
  /** Runs `work` as activity in progress (a task handler, a test's own call): virtual time stands still until it ends. */
  busy<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Resolves at the next moment everything waits: on virtual time, before the clock moves on (and
   * at most once per simulated instant); on scaled time, after a short real pause. Rejects when
   * nothing is left that could ever move the clock.
   */
  settled(): Promise<void>;
  /** Virtual time: `listener` hears when nothing runs and nothing sleeps (open work can never end). Returns the unsubscribe. */
  onStall(listener: () => void): () => void;
  /**
   * Something outside the workflows changed the world at this instant (an operator's SendTaskSuccess
   * woke a parked execution): on virtual time, `settled()` waiters may look once more before time moves.
   */
  outsideEvent(): void;
}

export interface SimClockOptions {
  /** Simulated seconds per real second, e.g. 1000. */
  timeScale: number;
  /** Simulated epoch ms at creation. Default 2026-01-01T00:00:00Z. */
  startAt?: number;
  /** Real monotonic time in ms; injectable so tests can step time by hand. Default performance.now. */
  realNow?: () => number;
}

/** The default start of simulated time: 2026-01-01T00:00:00Z. */
export const SIMULATED_EPOCH = Date.UTC(2026, 0, 1);

/** How long `settled()` pauses on scaled time, in real ms. */
const SCALED_SETTLE_MS = 5;

/** Simulated time that runs `timeScale` times faster than real time. */
export class SimClock implements TimeSource {
  readonly kind = 'scaled';
  readonly timeScale: number;
  readonly startAt: number;
  private readonly realNow: () => number;
  private readonly realStart: number;

  constructor({ timeScale, startAt = SIMULATED_EPOCH, realNow = () => performance.now() }: SimClockOptions) {
    if (!(timeScale > 0) || !Number.isFinite(timeScale)) throw new RangeError(`timeScale must be a positive number, got ${timeScale}`);
    this.timeScale = timeScale;
    this.startAt = startAt;
    this.realNow = realNow;
    this.realStart = realNow();
  }

  now(): number {
    return this.startAt + Math.floor((this.realNow() - this.realStart) * this.timeScale);
  }

  /** Real milliseconds that `simSeconds` of simulated time take. */
  realMsFor(simSeconds: number): number {
    return (simSeconds * 1000) / this.timeScale;
  }

  outsideEvent(): void {
    // Scaled time moves on its own: every settle is a new look.
  }

  sleep(simSeconds: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      // A stopped execution's Wait must not keep the process alive for the rest of its duration.
      const onAbort = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        this.realMsFor(Math.max(0, simSeconds)),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  busy<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  settled(): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, SCALED_SETTLE_MS));
  }

  onStall(): () => void {
    return () => undefined;
  }
}
