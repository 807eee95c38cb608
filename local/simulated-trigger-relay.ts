import type { ControlPlane } from '../control-plane/control-plane';
import { takeSiteEvent } from '../control-plane/site-event-intake';
import { describeError } from '../core/errors';
import { parseRelayProgram, siteEventNodes, type SiteEvent } from '../core/site/site-event';
import type { SiteEventStore } from '../ports/site-event-store';
import type { TriggerFiring, TriggerManagerModel } from '../simulator/models/trigger-manager';
import { firingId } from './site-relay';
import { relayInProcess, type InProcessRelayDeps } from './in-process-relay';

/** The relay command of a simulated site's triggers: never run (the runtime delivers their firings in process). */
export const SIMULATED_RELAY = '/usr/local/bin/rollout relay deliver --spool /var/spool/rollout-relay';

export interface SimulatedTriggerRelayDeps extends InProcessRelayDeps {
  siteEvents: SiteEventStore;
  controlPlane: Pick<ControlPlane, 'wakeForSiteEvent'>;
}

/**
 * The relay of a simulated site, in process: what `rollout relay deliver` does for a real slurmctld, without the
 * program, the spool or HTTP. Each firing of the simulated strigger whose program ran (a lost or failing one
 * delivers nothing, as on a real site) and is a session's relay (parseRelayProgram: `... --event E --session S`)
 * goes through takeSiteEvent: its id as the relay's (firingId, the session included), its nodes expanded, fired
 * and received at the simulator's clock (the pass that ran it); each trigger pass runs at its time (relayInProcess).
 * Returns the unsubscribe. On an embedded runtime:
 * `relaySimulatedTriggers(runtime.simulator.simulator.workloadManager.triggers, { siteEvents: runtime.siteEvents, controlPlane: runtime })`.
 */
export function relaySimulatedTriggers(
  triggers: Pick<TriggerManagerModel, 'onFiring' | 'onPassScheduled' | 'catchUp'>,
  deps: SimulatedTriggerRelayDeps,
): () => void {
  const report = deps.report ?? (() => {});
  const source = { onScheduled: triggers.onPassScheduled.bind(triggers), catchUp: () => triggers.catchUp(), onEmitted: triggers.onFiring.bind(triggers) };
  return relayInProcess(
    source,
    (firing) => {
      const event = siteEventOfFiring(firing, report);
      return event && { id: event.id, take: async () => ({ event, intake: await takeSiteEvent(event, deps) }) };
    },
    deps,
  );
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
