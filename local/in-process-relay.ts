import { setMaxListeners } from 'node:events';
import type { SiteEventIntake } from '../control-plane/site-event-intake';
import { describeError } from '../core/errors';
import type { SiteEvent } from '../core/site/site-event';
import type { TimeSource } from '../time/sim-clock';

/** A simulated site's source of events (its slurmctld's trigger passes, its SSM's notifications): what it schedules, runs and emits. */
export interface SimulatedEventSource<T> {
  /** Told of each event the site schedules (epoch ms). */
  onScheduled(listener: (at: number) => void): () => void;
  /** Runs the events that fell due. */
  catchUp(): void;
  /** Told of each one it emits (a firing, a notification). */
  onEmitted(listener: (item: T) => void): () => void;
}

export interface InProcessRelayDeps {
  /**
   * The runtime's clock. The simulator runs its events only as it is read, where a real site runs them whether anyone
   * looks or not: the relay sleeps until each and runs it then (a workflow parked for them reads nothing meanwhile).
   * Each delivery is work in progress on it (virtual time waits for it).
   */
  clock: Pick<TimeSource, 'now' | 'sleep' | 'busy'>;
  /** Told of each event taken, with what it came to (tests and the bench watch them). */
  onTaken?: (event: SiteEvent, intake: SiteEventIntake) => void;
  /** Told of one that could not be taken (unreadable, the store away): the backstop poll covers it. */
  report?: (line: string) => void;
}

/** What an emitted item delivers: its id (for a report) and the taking; undefined when it delivers nothing. */
export type InProcessDelivery = { id: string; take: () => Promise<{ event: SiteEvent; intake: SiteEventIntake } | undefined> } | undefined;

/**
 * A simulated site's relay, in process (the shape both the trigger relay and the SSM notification bridge share):
 * runs the site's events at their time (runWhenDue) and takes each item it emits as work in progress on the clock,
 * reporting one that fails. Returns the unsubscribe.
 */
export function relayInProcess<T>(source: SimulatedEventSource<T>, deliveryOf: (item: T) => InProcessDelivery, deps: InProcessRelayDeps): () => void {
  const report = deps.report ?? (() => {});
  const stopped = new AbortController();
  const stopScheduled = runWhenDue(source.onScheduled, source.catchUp, deps.clock, stopped.signal);
  const stopEmitted = source.onEmitted((item) => {
    const delivery = deliveryOf(item);
    if (!delivery) return;
    deps.clock.busy(delivery.take).then(
      (taken) => (taken ? deps.onTaken?.(taken.event, taken.intake) : undefined),
      (err: unknown) => report(`${delivery.id}: not taken: ${describeError(err)}`),
    );
  });
  return () => {
    stopped.abort();
    stopScheduled();
    stopEmitted();
  };
}

/**
 * Runs a simulated site's events at their time on the runtime's clock: told of each scheduled one (`onScheduled`),
 * sleeps until it and runs what fell due (`catchUp`) as work in progress. The simulator runs its events only as it
 * is read: a runtime parked for them reads nothing meanwhile. Returns the unsubscribe.
 */
export function runWhenDue(
  onScheduled: (listener: (at: number) => void) => () => void,
  catchUp: () => void,
  clock: Pick<TimeSource, 'now' | 'sleep' | 'busy'>,
  stopped: AbortSignal,
): () => void {
  // One pending sleep per event due, each listening for the stop: as many as the site has events scheduled.
  setMaxListeners(0, stopped);
  return onScheduled((at) => {
    clock.sleep(Math.max(0, at - clock.now()) / 1000, stopped).then(
      () => (stopped.aborted ? undefined : clock.busy(async () => catchUp())),
      () => undefined,
    );
  });
}
