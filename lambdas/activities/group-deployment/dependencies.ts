import type { Logger } from '@aws-lambda-powertools/logger';
import type { Clock } from '../../../core/clock';
import type { DeploymentStore } from '../../../ports/deployment-store';
import type { RunStartStore } from '../../../ports/run-start-store';
import type { Provisioner } from '../../../ports/provisioner';
import type { NodeLockStore } from '../../../ports/node-locks';
import type { Inventory, WorkloadManager } from '../../../ports/site';
import type { StatusEventPublisher } from '../../../ports/status-events';
import type { TaskRunStore } from '../../../ports/task-run-store';

export interface GroupDeploymentDependencies {
  store: DeploymentStore;
  inventory: Inventory;
  provisioner: Provisioner;
  /** The per-node locks every workflow of the store shares: a batch's action starts only once the deployment holds all its nodes. */
  locks: NodeLockStore;
  /**
   * Where the site's claims are read (Slurm reasons naming a run) before a batch touches its nodes; a
   * deployed stack configured without a workload manager for its deployment functions checks the locks only.
   */
  workloadManager?: Pick<WorkloadManager, 'getNodes'>;
  clock: Clock;
  /** The clock is a simulated one (a simulated site): its runs say so, and their instants are never shown as dates. */
  simulatedTime?: boolean;
  settings: GroupDeploymentSettings;
  /** Where a deploy phase run as a task graph keeps its run: its nodes' task states decide which nodes deployed. */
  taskRuns: TaskRunStore;
  /** The activities' structured logger; by default one at POWERTOOLS_LOG_LEVEL (lambdas/activities/middleware.ts). */
  logger?: Logger;
  /** Where status events go (an EventBridge bus, the data dir's events file); none without it. */
  events?: StatusEventPublisher;
  /** Where Start Deployment records a refused request, so that the deployment id says why; none without it. */
  starts?: RunStartStore;
}

export interface GroupDeploymentSettings {
  /** Most batches one child execution runs; fewer when long timeouts mean more polls per batch (batch-pages.ts). */
  batchesPerPage: number;
  /** Longest wait between two polls of a running site action. */
  maxPollSeconds: number;
  /** Lease of a batch's node locks, renewed at each poll: several times the longest wait between two polls. */
  lockLeaseSeconds: number;
}

export const defaultGroupDeploymentSettings: GroupDeploymentSettings = { batchesPerPage: 100, maxPollSeconds: 600, lockLeaseSeconds: 3600 };

/** The lease a batch's locks get: the configured one, or 4 of the longest polls if the deployment polls slower. */
export function deploymentLeaseSeconds(settings: GroupDeploymentSettings, pollIntervalSeconds: number): number {
  return Math.max(settings.lockLeaseSeconds, 4 * Math.max(pollIntervalSeconds, settings.maxPollSeconds));
}
