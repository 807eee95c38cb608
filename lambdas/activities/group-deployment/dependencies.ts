import type { Logger } from '@aws-lambda-powertools/logger';
import type { Clock } from '../../../core/clock';
import type { DeploymentStore } from '../../../ports/deployment-store';
import type { RunStartStore } from '../../../ports/run-start-store';
import type { Provisioner } from '../../../ports/provisioner';
import type { Inventory } from '../../../ports/site';
import type { StatusEventPublisher } from '../../../ports/status-events';
import type { TaskRunStore } from '../../../ports/task-run-store';

export interface GroupDeploymentDependencies {
  store: DeploymentStore;
  inventory: Inventory;
  provisioner: Provisioner;
  clock: Clock;
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
}

export const defaultGroupDeploymentSettings: GroupDeploymentSettings = { batchesPerPage: 100, maxPollSeconds: 600 };
