import type { OperationState } from '../core/scheduling';
import type { ScheduleFields, TaskRunChunk, TaskRunPlan, TaskRunSettings } from '../core/task-graph';
import { ENDED_RUN_STATUSES, type RunStatus } from '../core/run-status';
import type { RunStore } from './run-store';

/**
 * A task run's status: core's run statuses (core/run-status.ts), as a deployment's. The stop, as a
 * deployment's and an upgrade's (core/rolling-upgrade/session.ts SESSION_STOP): the tasks in flight
 * finish, none starts, and the workflow ends with the run STOPPED. The status is the stop: it survives
 * every pass and continue-as-new.
 */
export type TaskRunStatus = RunStatus;

/** The statuses a task run ends in: no workflow works on it any more, nothing resumes it. */
export const ENDED_TASK_RUN_STATUSES: readonly TaskRunStatus[] = ENDED_RUN_STATUSES;

/** Whether no workflow works on the run: it has ended, or it is STOPPED and waits for a resume (the workflow ends there). */
export function isTaskRunSettled(status: TaskRunStatus): boolean {
  return ENDED_TASK_RUN_STATUSES.includes(status) || status === 'STOPPED';
}

/** A task run: its settings, where its schedule is, and counts for a cheap progress read. */
export interface TaskRunRecord {
  runId: string;
  /** On the run's clock: a simulated instant when `simulatedTime` (see wallCreatedAt). */
  createdAt: string;
  /** The run is on simulated time (a simulated site): its instants are not dates, and are never shown as such. */
  simulatedTime?: boolean;
  /** On simulated time: the wall-clock instant it was created, for listing it among others. */
  wallCreatedAt?: string;
  status: TaskRunStatus;
  settings: TaskRunSettings;
  /** Passes of the annealer applied so far: an increment carries the count it expects, so a retried one does nothing twice. */
  increment: number;
  schedule: ScheduleFields;
  /** Node tasks by state. */
  counts: Record<OperationState, number>;
  nodeCount: number;
  chunkCount: number;
  /** Set when the run is a group deployment's deploy phase. */
  deployment?: { deploymentId: string; group: string };
  /**
   * The newest generation its executions continued as new to (`<runId>-g<n>`): a person's resume starts
   * its chain after it, so that its own continue-as-new never meets a name an earlier chain used.
   */
  generation?: number;
  /** Epoch ms (the site's clock) the run started and, once over, ended. */
  startedAt: number;
  finishedAt?: number;
}

/**
 * Durable state of task runs: the plan (written once, in parts), the record, and each chunk of
 * nodes' task states. Single-item conditional writes only.
 */
export interface TaskRunStore extends RunStore<TaskRunRecord> {
  /** Writes the plan and the chunks, then the record. Idempotent: an existing run is left as it is. */
  createRun(record: Omit<TaskRunRecord, 'increment'>, plan: TaskRunPlan, chunks: readonly TaskRunChunk[]): Promise<void>;
  getRun(runId: string): Promise<TaskRunRecord | undefined>;
  /** Standalone runs (not a group deployment's deploy phase), newest first. */
  list(): Promise<TaskRunRecord[]>;
  /**
   * The cancel request: RUNNING, STOPPING or STOPPED -> CANCELLING (core/run-status.ts RUN_CANCEL; a conditional write; the workflow reads it at its next
   * pass). Throws TaskRunNotFoundError, or SessionNotCancellableError once it has ended and for a group's
   * deploy phase (its deployment's cancel cancels it). Asking again while CANCELLING is no error.
   */
  requestCancel(runId: string): Promise<TaskRunRecord>;
  /**
   * Removes a run that has ended (SUCCEEDED, FAILED, CANCELLED) with its plan, chunks and messages, as a
   * DELETE of an ended deployment removes it. Throws TaskRunNotFoundError, or SessionNotCancellableError while it has not ended.
   */
  removeEnded(runId: string): Promise<TaskRunRecord>;
  getPlan(runId: string): Promise<TaskRunPlan>;
  /** Every chunk, in order. */
  getChunks(runId: string, chunkCount: number): Promise<TaskRunChunk[]>;
  /** Writes these chunks (by index) as they are. */
  putChunks(runId: string, chunks: ReadonlyMap<number, TaskRunChunk>): Promise<void>;
  /**
   * The stop request: RUNNING -> STOPPING (RUN_STOP; asking again while STOPPING is no error; an increment never
   * writes STOPPING or RUNNING, so the request is never lost to one). Throws TaskRunNotFoundError, or
   * SessionNotStoppableError in any other status and for a group's deploy phase (its deployment's stop stops it).
   */
  requestStop(runId: string): Promise<TaskRunRecord>;
  /**
   * A person's resume: a STOPPED run, or a STOPPING one (its stop withdrawn), made RUNNING again
   * (core/run-status.ts RUN_RESUME); any other run is returned as it is. Throws TaskRunNotFoundError.
   */
  reopenStopped(runId: string): Promise<TaskRunRecord>;
  /** Records that an execution of generation `generation` runs the run (kept only if newer than the stored one). */
  noteGeneration(runId: string, generation: number): Promise<void>;
  /**
   * Applies an increment: the record's fields replaced and `increment` bumped, if it is still at
   * `expectedIncrement`; else StaleWriteError (another attempt applied it). The status is written
   * only when the run ends or stops, so a cancel or stop request written meanwhile is never overwritten.
   */
  commitIncrement(
    runId: string,
    expectedIncrement: number,
    update: Pick<TaskRunRecord, 'schedule' | 'counts' | 'status'> & { finishedAt?: number },
  ): Promise<void>;
}
