import type { UpgradeSession } from '../core/rolling-upgrade/session';
import type { DeploymentRecord } from './deployment-store';
import type { TaskRunRecord } from './task-run-store';

/** A run's record with its kind: what an id resolves to, once. */
export type RunRecord =
  | { kind: 'upgrade'; record: UpgradeSession }
  | { kind: 'deployment'; record: DeploymentRecord }
  | { kind: 'tasks'; record: TaskRunRecord };

/**
 * The record a run id names, whatever its kind (an upgrade session, a group deployment, a task run),
 * in one read of the store: the control plane resolves every id here before it acts on the run.
 */
export interface RunRecords {
  /**
   * The run `id` names, read consistently; undefined for an id no run has. Ids cannot repeat across
   * kinds (each is a hash of its own workflow's execution ARN, core/execution-id.ts); were two records
   * ever under one id, the upgrade would win, then the deployment, then the task run.
   */
  find(id: string): Promise<RunRecord | undefined>;
}
