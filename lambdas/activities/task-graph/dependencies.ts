import type { Logger } from '@aws-lambda-powertools/logger';
import type { Clock } from '../../../core/clock';
import type { DeploymentStore } from '../../../ports/deployment-store';
import type { Inventory } from '../../../ports/site';
import type { TaskExecutor } from '../../../ports/task-executor';
import type { TaskRunStore } from '../../../ports/task-run-store';

/** What every task-graph handler is built from: injected, never read from globals. */
export interface TaskGraphDependencies {
  store: TaskRunStore;
  /** A group's deploy phase reads its nodes and the deployment's graph here. */
  deployments: DeploymentStore;
  /** Nodes, their roles, and the alive / available gates. */
  inventory: Inventory;
  executor: TaskExecutor;
  clock: Clock;
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
}

export const defaultTaskGraphSettings: TaskGraphSettings = { iterationsPerExecution: 1000 };
