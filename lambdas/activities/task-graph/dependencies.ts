import type { Logger } from '@aws-lambda-powertools/logger';
import type { Clock } from '../../../core/clock';
import type { DeploymentStore } from '../../../ports/deployment-store';
import type { NodeLockStore } from '../../../ports/node-locks';
import type { RunStartStore } from '../../../ports/run-start-store';
import type { Inventory, WorkloadManager } from '../../../ports/site';
import type { TaskExecutor } from '../../../ports/task-executor';
import type { TaskRunStore } from '../../../ports/task-run-store';

/** What every task-graph handler is built from: injected, never read from globals. */
export interface TaskGraphDependencies {
  store: TaskRunStore;
  /** Where a refused standalone run says why (the API's start record of its id): absent, the refusal is the execution's error only. */
  starts?: RunStartStore;
  /** A group's deploy phase reads its nodes and the deployment's graph here. */
  deployments: DeploymentStore;
  /** Nodes, their roles, and the alive / available gates. */
  inventory: Inventory;
  /** The per-node locks every workflow of the store shares: a task changes a node only while the run holds its lock. */
  locks: NodeLockStore;
  /** The site's claims (Slurm reasons naming a run) read before a node is touched, and a cancelled run's drains lifted. */
  workloadManager: Pick<WorkloadManager, 'getNodes' | 'resumeNodes'>;
  executor: TaskExecutor;
  clock: Clock;
  /** The clock is a simulated one (a simulated site): its runs say so, and their instants are never shown as dates. */
  simulatedTime?: boolean;
  settings: TaskGraphSettings;
  /** The activities' structured logger; by default one at POWERTOOLS_LOG_LEVEL (lambdas/activities/middleware.ts). */
  logger?: Logger;
}

export interface TaskGraphSettings {
  /**
   * Passes one execution runs before it continues as a new execution (or, as a group's child, hands
   * back to its parent). A pass costs 9 history events (Check Run, Wait For Tasks, Advance Task Run),
   * so 1,000 keeps an execution near 9,000 of the 25,000 allowed.
   */
  iterationsPerExecution: number;
  /**
   * Lease of the run's node locks, renewed on every pass (the heartbeat): several times the longest
   * wait between two passes, so that only a dead run lets it run out. A run polling slower gets 4 poll intervals.
   */
  lockLeaseSeconds: number;
}

export const defaultTaskGraphSettings: TaskGraphSettings = { iterationsPerExecution: 1000, lockLeaseSeconds: 3600 };

/** The lease a run's locks get: the configured one, or 4 poll intervals if the run polls slower. */
export function taskRunLeaseSeconds(settings: TaskGraphSettings, pollIntervalSeconds: number): number {
  return Math.max(settings.lockLeaseSeconds, 4 * pollIntervalSeconds);
}
