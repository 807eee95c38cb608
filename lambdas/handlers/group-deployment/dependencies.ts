import type { Clock } from '../../domain/clock';
import type { DeploymentStore } from '../../ports/deployment-store';
import type { Provisioner } from '../../ports/provisioner';
import type { Inventory } from '../../ports/site';

export interface GroupDeploymentDependencies {
  store: DeploymentStore;
  inventory: Inventory;
  provisioner: Provisioner;
  clock: Clock;
  settings: GroupDeploymentSettings;
}

export interface GroupDeploymentSettings {
  /**
   * Batches one child execution runs. A batch costs at most about 100 history events (its polls back
   * off to 10 minutes, so even a deploy timeout of an hour is ~10 polls): 100 batches stay near 10,000.
   */
  batchesPerPage: number;
  /** Longest wait between two polls of a running site action. */
  maxPollSeconds: number;
}

export const defaultGroupDeploymentSettings: GroupDeploymentSettings = { batchesPerPage: 100, maxPollSeconds: 600 };
