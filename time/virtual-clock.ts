import { EventQueue } from './event-queue';
import { SIMULATED_EPOCH, type TimeSource } from './sim-clock';

/**
 * Turns of the event loop (setImmediate) that must pass with nothing running before the clock
 * moves. Between one task ending and the next state's task starting the engine works on promise
 * callbacks only, so one turn would do; the margin covers I/O callbacks that start work.
 */
const SETTLE_TURNS = 3;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface VirtualClockOptions {
  /** Simulated epoch ms at creation. Default 2026-01-01T00:00:00Z. */
  startAt?: number;
}

/** Raised to `settled()` waiters when nothing sleeps and nothing runs: the clock can never move again. */
export class ClockStalledError extends Error {
  constructor() {
    super('virtual time stalled: nothing runs and nothing waits for time to pass');
    this.name = 'ClockStalledError';
  }
}

/**
 * Virtual time: the clock moves only when every participant waits. While any work counted by
 * `busy()` runs (task handlers, and with them their HTTP calls to the simulator and DynamoDB), time
 * stands still; once nothing has run for a few turns of the event loop and someone sleeps, the clock
 * jumps to the earliest wake time and wakes every sleeper due then, in the order they went to sleep.
 * A makespan so depends on what the workflows do, not on how fast the host does it.
 */
export class VirtualClock implements TimeSource {
  readonly kind = 'virtual';
  readonly startAt: number;
  private current: number;
  private readonly sleepers = new EventQueue();
  /** Wake-ups of aborted sleeps still in the queue. */
  private readonly aborted = new Set<(at: number) => void>();
  /** Work in progress (`busy()` calls not yet ended). */
  private running = 0;
  /** Bumped whenever work starts or ends or sleepers wake: a settle counts only if it stays put. */
  private activity = 0;
  private checking = false;
  private advances = 0;
  /** `settled()` waiters, released at most once per simulated instant or outside event (the `advances` count they were last released at). */
  private settleWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];
  private releasedAt = -1;
  private readonly stallListeners = new Set<() => void>();

  constructor({ startAt = SIMULATED_EPOCH }: VirtualClockOptions = {}) {
    this.startAt = startAt;
    this.current = startAt;
  }

  now(): number {
    return this.current;
  }

  sleep(simSeconds: number, signal?: AbortSignal): Promise<void> {
    const at = this.current + Math.max(0, Math.round(simSeconds * 1000));
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const run = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      // An aborted sleep wakes now and no longer moves the clock: its entry is dropped when it reaches the head.
      const onAbort = () => {
        this.aborted.add(run);
        this.activity++;
        resolve();
        this.watch();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.push({ at, run });
      this.watch();
    });
  }

  async busy<T>(work: () => Promise<T>): Promise<T> {
    this.running++;
    this.activity++;
    try {
      return await work();
    } finally {
      this.running--;
      this.activity++;
      if (this.running === 0) this.watch();
    }
  }

  settled(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.settleWaiters.push({ resolve, reject });
      this.watch();
    });
  }

  outsideEvent(): void {
    // A new epoch without moving time: the settled() waiters released at this instant may look again.
    this.advances++;
    this.activity++;
    this.watch();
  }

  onStall(listener: () => void): () => void {
    this.stallListeners.add(listener);
    return () => this.stallListeners.delete(listener);
  }

  /** Sleepers not yet woken (for tests and figures). */
  get sleeping(): number {
    return this.sleepers.size - this.aborted.size;
  }

  /** Starts watching for everything to settle, unless already watching. */
  private watch(): void {
    if (this.checking) return;
    this.checking = true;
    void this.settle();
  }

  private async settle(): Promise<void> {
    for (let turn = 0; turn < SETTLE_TURNS; turn++) {
      const seen = this.activity;
      await nextTurn();
      if (this.running > 0) {
        // The end of that work watches again.
        this.checking = false;
        return;
      }
      if (this.activity !== seen) turn = -1;
    }
    this.checking = false;
    this.step();
  }

  /** Everything waits: let observers look, else move the clock to the next sleeper, else report a stall. */
  private step(): void {
    if (this.settleWaiters.length > 0 && this.releasedAt !== this.advances) {
      this.releasedAt = this.advances;
      for (const waiter of this.settleWaiters.splice(0)) waiter.resolve();
      this.activity++;
      this.watch();
      return;
    }
    for (let head = this.sleepers.peek(); head && this.aborted.has(head.run); head = this.sleepers.peek()) {
      this.aborted.delete(head.run);
      this.sleepers.pop();
    }
    const next = this.sleepers.peekTime();
    if (next !== undefined) {
      this.current = Math.max(this.current, next);
      this.advances++;
      while (this.sleepers.peekTime() === next) this.sleepers.pop()!.run(next);
      this.activity++;
      this.watch();
      return;
    }
    for (const waiter of this.settleWaiters.splice(0)) waiter.reject(new ClockStalledError());
    for (const listener of [...this.stallListeners]) listener();
  }
}
