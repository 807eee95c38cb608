import type { DeploymentPlan, DeploymentRunState } from '../core/group-deployment';
import type { DeploymentPhase } from '../core/group-deployment';
import type { TaskRunRequest } from '../core/task-graph/task-run-request';
import { ENDED_RUN_STATUSES, type RunStatus } from '../core/run-status';
import type { RunStore } from './run-store';

/** A deployment's status: core's run statuses (core/run-status.ts), as a task run's. */
export type DeploymentStatus = RunStatus;

/** Statuses in which the workflow starts no group, phase or batch any more (actions in flight finish). */
export const isDeploymentWindingDown = (status: DeploymentStatus): boolean => status === 'CANCELLING' || status === 'STOPPING';

/** The statuses a deployment ends in: no workflow works on it any more, nothing resumes it. */
export const ENDED_DEPLOYMENT_STATUSES: readonly DeploymentStatus[] = ENDED_RUN_STATUSES;

export const isDeploymentEnded = (status: DeploymentStatus): boolean => ENDED_DEPLOYMENT_STATUSES.includes(status);

export interface DeploymentSettings {
  /** Ready groups that may run at once (Shipyard runs one at a time). */
  maxParallelGroups: number;
  prepareTimeoutSeconds: number;
  deployTimeoutSeconds: number;
  pollIntervalSeconds: number;
  /** The task graph each group's deploy phase runs (instead of the provisioner's deploy action). */
  taskGraph?: TaskRunRequest;
}

export interface DeploymentRecord {
  deploymentId: string;
  /** On the run's clock: a simulated instant when `simulatedTime` (see wallCreatedAt). */
  createdAt: string;
  /** The run is on simulated time (a simulated site): its instants are not dates, and are never shown as such. */
  simulatedTime?: boolean;
  /** On simulated time: the wall-clock instant it was created, for listing it among others. */
  wallCreatedAt?: string;
  status: DeploymentStatus;
  settings: DeploymentSettings;
  /** Group and node stages; replaced as a whole, guarded by `version`. */
  state: DeploymentRunState;
  version: number;
  groupCount: number;
  nodeCount: number;
}

/** What one site action (a batch of a group's phase) ended with. */
export interface BatchResult {
  group: string;
  phase: DeploymentPhase;
  batch: number;
  succeeded: string[];
  failed: string[];
  /** The action did not finish within the phase timeout: its unreported nodes are in `failed`. */
  timedOut: boolean;
}

/**
 * Durable state of group deployments: the plan (fixed at start), the run state, and each batch's
 * result. Single-item conditional writes only.
 */
export interface DeploymentStore extends RunStore<DeploymentRecord> {
  /** Writes the plan, then the record. Idempotent: an existing id is left as it is. */
  createDeployment(record: Omit<DeploymentRecord, 'version'>, plan: DeploymentPlan): Promise<void>;
  getDeployment(deploymentId: string): Promise<DeploymentRecord | undefined>;
  getPlan(deploymentId: string): Promise<DeploymentPlan>;
  /** Replaces the run state if it is still at `expectedVersion`, else throws StaleWriteError. */
  saveState(deploymentId: string, expectedVersion: number, state: DeploymentRunState): Promise<void>;
  setStatus(deploymentId: string, status: DeploymentStatus): Promise<void>;
  /**
   * The cancel request: RUNNING, STOPPING or STOPPED -> CANCELLING (core/run-status.ts RUN_CANCEL; a conditional
   * write, the workflow reads it at its next increment). Throws DeploymentNotFoundError, or SessionNotCancellableError once it has ended.
   * Asking again while CANCELLING is no error.
   */
  requestCancel(deploymentId: string): Promise<DeploymentRecord>;
  /**
   * Removes a deployment that has ended (SUCCEEDED, FAILED, CANCELLED) with its plan and batch results,
   * as a DELETE of an ended upgrade session removes it. Throws DeploymentNotFoundError, or
   * SessionNotCancellableError while it has not ended.
   */
  removeEnded(deploymentId: string): Promise<DeploymentRecord>;
  /** RUNNING -> STOPPING (RUN_STOP; asking again while STOPPING is no error). Throws DeploymentNotFoundError or SessionNotStoppableError. */
  requestStop(deploymentId: string): Promise<DeploymentRecord>;
  /**
   * A person's resume of a STOPPED or STOPPING deployment (its stop withdrawn): back to RUNNING (any other
   * status is left as it is; core/run-status.ts RUN_RESUME). Throws DeploymentNotFoundError.
   */
  reopenStopped(deploymentId: string): Promise<DeploymentRecord>;
  /** Idempotent: the same batch written twice keeps one result. */
  putBatchResult(deploymentId: string, result: BatchResult): Promise<void>;
  listBatchResults(deploymentId: string, group: string, phase: DeploymentPhase): Promise<BatchResult[]>;
}
