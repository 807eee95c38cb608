import { setMaxListeners } from 'node:events';
import type { ControlPlane } from '../control-plane/control-plane';
import { takeSiteEvent, type SiteEventIntake } from '../control-plane/site-event-intake';
import { describeError } from '../core/errors';
import { parseRelayProgram, siteEventNodes, type SiteEvent } from '../core/site/site-event';
import type { SiteEventStore } from '../ports/site-event-store';
import type { TriggerFiring, TriggerManagerModel } from '../simulator/models/trigger-manager';
import { firingId } from './site-relay';
import type { TimeSource } from '../time/sim-clock';

/** The relay command of a simulated site's triggers: never run (the runtime delivers their firings in process). */
export const SIMULATED_RELAY = '/usr/local/bin/rollout relay deliver --spool /var/spool/rollout-relay';

export interface SimulatedTriggerRelayDeps {
  siteEvents: SiteEventStore;
  /**
   * The runtime's clock. The simulator runs its events only as it is read: slurmctld runs its trigger passes
   * whether anyone looks or not, so the relay sleeps until each pass and runs it then (a workflow parked for the
   * firings reads nothing meanwhile). Each delivery is work in progress on it (virtual time waits for it).
   */
  clock: Pick<TimeSource, 'now' | 'sleep' | 'busy'>;
  controlPlane: Pick<ControlPlane, 'wakeForSiteEvent'>;
  /** Told of each firing taken, with what it came to (tests and the bench watch them). */
  onTaken?: (event: SiteEvent, intake: SiteEventIntake) => void;
  /** Told of a firing that could not be taken (its hostlist unreadable, the store away): the backstop poll covers it. */
  report?: (line: string) => void;
}

/**
 * The relay of a simulated site, in process: what `rollout relay deliver` does for a real slurmctld, without the
 * program, the spool or HTTP. Each firing of the simulated strigger whose program ran (a lost or failing one
 * delivers nothing, as on a real site) and is a session's relay (parseRelayProgram: `... --event E --session S`)
 * goes through takeSiteEvent: its id as the relay's (firingId, the session included), its nodes expanded, fired
 * and received at the simulator's clock (the pass that ran it). Returns the unsubscribe. On an embedded runtime:
 * `relaySimulatedTriggers(runtime.simulator.simulator.workloadManager.triggers, { siteEvents: runtime.siteEvents, controlPlane: runtime })`.
 */
export function relaySimulatedTriggers(
  triggers: Pick<TriggerManagerModel, 'onFiring' | 'onPassScheduled' | 'catchUp'>,
  deps: SimulatedTriggerRelayDeps,
): () => void {
  const report = deps.report ?? (() => {});
  const { clock } = deps;
  const stopped = new AbortController();
  const stopPasses = runWhenDue(triggers.onPassScheduled.bind(triggers), () => triggers.catchUp(), clock, stopped.signal);
  const stopFirings = triggers.onFiring((firing) => {
    const event = siteEventOfFiring(firing, report);
    if (!event) return;
    clock
      .busy(() => takeSiteEvent(event, deps))
      .then(
        (intake) => deps.onTaken?.(event, intake),
        (err: unknown) => report(`${event.id}: not taken: ${describeError(err)}`),
      );
  });
  return () => {
    stopped.abort();
    stopPasses();
    stopFirings();
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

/** The site event a simulated firing delivers, or undefined when it delivers none (not run, not a session's relay, an unreadable hostlist). */
function siteEventOfFiring(firing: TriggerFiring, report: (line: string) => void): SiteEvent | undefined {
  if (firing.outcome !== 'ran') return undefined;
  const relay = parseRelayProgram(firing.program);
  if (!relay) return undefined;
  const firedAt = new Date(firing.at).toISOString();
  let nodes: string[];
  try {
    nodes = siteEventNodes(firing.hostlist);
  } catch (err) {
    report(`trigger ${firing.triggerId}: hostlist '${firing.hostlist}' not taken: ${describeError(err)}`);
    return undefined;
  }
  return {
    id: firingId(relay.event, firing.hostlist, firedAt, relay.session),
    event: relay.event,
    nodes,
    session: relay.session,
    firedAt,
    // Delivered in the pass that fired it: no process, spool or network between them.
    receivedAt: firedAt,
  };
}
