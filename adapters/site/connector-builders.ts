import type { Clock } from '../../core/clock';
import type {
  BootServiceProfile,
  InventoryProfile,
  ProvisionerProfile,
  SecretReference,
  SiteProfile,
  TransportProfile,
  WorkloadManagerProfile,
} from '../../core/site/site-profile';
import type { ConnectorState } from '../../ports/connector-state';
import type { Provisioner } from '../../ports/provisioner';
import type { BootService, Inventory, WorkloadManager } from '../../ports/site';
import type { Token } from './secret-token';

// The types every connector builder shares: the HTTP ones (site-from-profile.ts) and the command-driven ones (commands/command-connectors.ts).

/** What a connector builder gets besides its own part of the profile. */
export interface ConnectorContext {
  profile: SiteProfile;
  /** Where in the profile this connector is (`bootService`), for error messages. */
  path: string;
  /** The connector's transport, or the profile's; only for command-driven types. */
  transport(service: { transport?: TransportProfile }): TransportProfile;
  resolveSecret(reference: SecretReference, path: string): Promise<Token>;
  /** The site's clock (slurm-reboot judges "rebooted since the request" by it). */
  clock: Clock;
  /** Where the profile's relative paths are read from. */
  baseDir: string;
  /** Where slurm-reboot and the command provisioner keep what they remember between activities. */
  connectorState: ConnectorState;
  /** Whether the caller gave a ConnectorState (a run does; a one-off read such as the CLI's group check does not). */
  hasConnectorState: boolean;
  /** The site's inventory as the profile describes it (slurm-reboot resolves a group-label limit through it). */
  inventory(): Promise<Inventory>;
}

type Builder<P extends { type: string }, T> = { [K in P['type']]?: (config: Extract<P, { type: K }>, context: ConnectorContext) => T | Promise<T> };

/** The connector builders by service and type: the HTTP ones here, the command-driven ones in commands/command-connectors.ts. */
export interface ConnectorBuilders {
  workloadManager: Builder<WorkloadManagerProfile, WorkloadManager>;
  bootService: Builder<BootServiceProfile, BootService>;
  inventory: Builder<InventoryProfile, Inventory>;
  provisioner: Builder<ProvisionerProfile, Provisioner>;
}
