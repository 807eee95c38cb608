import type { Logger } from '@aws-lambda-powertools/logger';
import type { Clock } from '../../../core/clock';
import type { EnvironmentStore } from '../../../ports/environment-store';
import type { EnvironmentUpgradeStore } from '../../../ports/environment-upgrade-store';
import type { SessionStore } from '../../../ports/session-store';
import type { Site } from '../../../ports/site';

/** What every environment-upgrade handler is built from: injected, never read from globals. */
export interface EnvironmentUpgradeDependencies {
  upgrades: EnvironmentUpgradeStore;
  environments: EnvironmentStore;
  /** The child rolling upgrades' sessions: read to follow them, cancelled to pass a deletion on. */
  sessions: SessionStore;
  /** The boot service (the release's template) and the inventory (the site's nodes, the starting group). */
  site: Pick<Site, 'bootService' | 'inventory'>;
  clock: Clock;
  /** The clock is a simulated one (a simulated site): the sessions it opens say so, and their instants are never shown as dates. */
  simulatedTime?: boolean;
  settings: EnvironmentUpgradeSettings;
  logger?: Logger;
}

export interface EnvironmentUpgradeSettings {
  /**
   * Loop iterations one execution may run before it continues as a new one. A poll of a running
   * rolling upgrade costs 11 history events (Check Phase, Wait, Dispatch Phase, Follow), so 1,000
   * keeps an execution near 11,000 of the 25,000 allowed.
   */
  iterationsPerExecution: number;
  /** How long a started child may take to open its session before the upgrade fails saying so. */
  childOpenTimeoutSeconds: number;
}

export const defaultEnvironmentUpgradeSettings: EnvironmentUpgradeSettings = {
  iterationsPerExecution: 1000,
  childOpenTimeoutSeconds: 900,
};
