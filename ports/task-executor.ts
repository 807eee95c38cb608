/**
 * What a task run needs from the site to run one node's task: start it, then look at it until it
 * ends. Shell, puppet, upload_file and rsync tasks go through the site's command transport to the
 * node; reboot through the boot service; drain and resume through the workload manager.
 */
import type { TaskType } from '../core/task-graph/graph-document';
import type { TaskExecution, TaskResult } from '../core/task-graph/task-run-state';

export type { TaskExecution, TaskResult } from '../core/task-graph/task-run-state';

/** One task to run on one node. */
export interface TaskInvocation {
  /** The operation's id (`node/task`): what the outcome is recorded against. */
  op: string;
  node: string;
  task: string;
  type: TaskType;
  /** The task's parameters, the attribute layers merged in for this node. */
  parameters: Record<string, unknown>;
  /** Seconds the task may take (its own `timeout`, else the run's default). */
  timeoutSeconds: number;
  /** Unique to this run and operation, stable across retries: a site call named by it is made once. */
  name: string;
  /** The run: named in the node's Slurm reason and boot session, so the site shows who works on it. */
  runId: string;
}

export interface TaskOutcome {
  result: TaskResult;
  /** What the site said when it did not go well (an exit code, a boot failure). */
  detail?: string;
}

/** A task in flight, as the run keeps it. */
export interface RunningTask {
  invocation: TaskInvocation;
  execution: TaskExecution;
  /** Epoch ms the task started. */
  startedAt: number;
}

export interface TaskExecutor {
  /** Why this site cannot run tasks of this type at all (no command transport, say); undefined when it can. */
  unsupported(type: TaskType): string | undefined;
  /**
   * Starts the tasks; alike tasks (same task, same parameters) may go to the site as one call (a
   * hostlist). Returns each operation's execution. Throws InvalidInputError when the site cannot run
   * a task of that type at all (no transport), SiteServiceError when the site failed (retryable).
   */
  start(invocations: readonly TaskInvocation[]): Promise<Map<string, TaskExecution>>;
  /**
   * One look at the running tasks: the outcome of each that ended (absent while it runs), and the
   * execution of each that moved on (a reboot that was drained and is now booting, say).
   */
  poll(running: readonly RunningTask[]): Promise<Map<string, { outcome?: TaskOutcome; execution?: TaskExecution }>>;
}
