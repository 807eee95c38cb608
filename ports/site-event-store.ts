import type { SiteEvent } from '../core/site/site-event';

export type { SiteEvent };

/**
 * The firings of the site's triggers the relay delivered (POST /site-events), kept by id so that a firing
 * delivered twice is recorded once; a later step wakes the waiting workflows from them (issue 29).
 */
export interface SiteEventStore {
  /** Records the firing unless one with its id is recorded already: true when it was new. */
  record(event: SiteEvent): Promise<boolean>;
  /** The recorded firings, oldest first (by receipt). */
  list(): Promise<SiteEvent[]>;
}
