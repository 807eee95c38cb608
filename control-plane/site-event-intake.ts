import type { SiteEvent } from '../core/site/site-event';
import type { SiteEventStore } from '../ports/site-event-store';
import type { ControlPlane } from './control-plane';

/** What a delivery of a site event came to. */
export interface SiteEventIntake {
  /** False for a firing recorded before (a second delivery): nothing changed. */
  recorded: boolean;
  /** Whether a workflow parked for the site was woken. */
  woke: boolean;
  /** Why the wake failed (the backstop poll wakes the workflow anyway). */
  wakeError?: string;
}

/**
 * One place where a site event enters the control plane, whoever delivers it (POST /site-events from the relay,
 * a relay spool on this host, a simulated site's trigger): recorded once by its id, then, when new and for a
 * session, that session's parked workflow is woken. Recorded first: a workflow that parks after this sees the
 * count it added (parkForSiteEvent), one parked before is woken; a second delivery wakes nothing.
 */
export async function takeSiteEvent(
  event: SiteEvent,
  deps: { siteEvents: SiteEventStore; controlPlane: Pick<ControlPlane, 'wakeForSiteEvent'> },
): Promise<SiteEventIntake> {
  const recorded = await deps.siteEvents.record(event);
  if (!recorded || !event.session) return { recorded, woke: false };
  return { recorded, ...(await deps.controlPlane.wakeForSiteEvent(event.session, event.event)) };
}
