import type { ApiControlPlane } from '../control-plane/control-plane';
import type { EnvironmentStore } from '../ports/environment-store';
import type { EnvironmentUpgradeStore } from '../ports/environment-upgrade-store';
import type { RunStartStore } from '../ports/run-start-store';
import type { SiteEventStore } from '../ports/site-event-store';
import type { Site } from '../ports/site';

/** What the REST API is built over: the control plane, the environment stores and (when it reaches it) the site. */
export interface ApiDependencies {
  controlPlane: ApiControlPlane;
  environments: EnvironmentStore;
  environmentUpgrades: EnvironmentUpgradeStore;
  /** Runs started and not yet recorded, or refused by their first state: their ids answer (never a 404) until their records exist. */
  runStarts: RunStartStore;
  /** The site's trigger firings the relay delivers (POST /site-events); without it that route answers 503. */
  siteEvents?: SiteEventStore;
  /**
   * The site, for the checks a request needs before it is answered (a boot template, node names,
   * groups). Without it, or while it fails, those checks are the workflow's: its session says why.
   */
  site?: Pick<Site, 'bootService' | 'inventory'>;
}
