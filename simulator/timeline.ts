import type { Clock } from '../core/clock';
import { EventQueue } from '../time/event-queue';

/**
 * The simulator's only notion of time passing: no timers. Every model calls `sync()` before it
 * reads or changes state, which runs the events that fell due since, in time order.
 */
export class Timeline {
  private readonly queue = new EventQueue();
  /** Time of the event being run; set while events run, so nested calls see the event's time. */
  private running: number | undefined;

  constructor(private readonly clock: Clock) {}

  /** Runs every due event and returns the simulated now (the event's own time when called from one). */
  sync(): number {
    if (this.running !== undefined) return this.running;
    const now = this.clock.now();
    try {
      for (let at = this.queue.peekTime(); at !== undefined && at <= now; at = this.queue.peekTime()) {
        const event = this.queue.pop()!;
        this.running = event.at;
        event.run(event.at);
      }
    } finally {
      this.running = undefined;
    }
    return now;
  }

  /** Schedules `run` at simulated time `at` (epoch ms). */
  at(at: number, run: (at: number) => void): void {
    this.queue.push({ at, run });
  }
}
