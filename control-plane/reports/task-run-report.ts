import { assembleSchedule, taskRunReport, type TaskPlan, type TaskResult, type TaskRunSettings } from '../../core/task-graph';
import type { OperationState } from '../../core/scheduling';
import type { TaskRunRecord, TaskRunStatus, TaskRunStore } from '../../ports/task-run-store';
import type { TimeBase } from '../../core/time-format';

/** A task run as `rollout deploy --graph --json` prints it; readable during the run as after it. */
export interface TaskRunView {
  runId: string;
  status: TaskRunStatus;
  /** node -> task -> its state (OpenCrowbar's PROPOSED, TODO, BLOCKED, TRANSITION, ACTIVE, ERROR), tasks in execution order. */
  nodes: Record<string, Record<string, OperationState>>;
  /** node -> task -> the failed node tasks (`node/task`) it waits behind. */
  blocked: Record<string, Record<string, string[]>>;
  /** node -> task -> what went wrong (`failed: exit 1`, `timeout: ...`). */
  errors: Record<string, Record<string, string>>;
  /** node -> task -> why the run left it alone (a node not alive or not available). */
  leftAlone: Record<string, Record<string, string>>;
  /** node -> task -> what the site reported for each task that ran to its end. */
  results: Record<string, Record<string, TaskResult>>;
  counts: Record<OperationState, number>;
  nodeCount: number;
  settings: TaskRunSettings;
  /** The tasks the selection or a condition left out, and why. */
  dropped: TaskPlan['dropped'];
  warnings: string[];
  /** On the run's clock (see timeBase). */
  createdAt: string;
  /** On simulated time: the wall-clock instant it was created. */
  wallCreatedAt?: string;
  /** What the instants are: wall-clock dates, or instants of a simulated site's clock (not dates). */
  timeBase: TimeBase;
  /** Seconds of the site's clock from the run's start to its end (or to now, while it runs). */
  elapsedSeconds?: number;
  /** A group deployment's deploy phase. */
  deployment?: { deploymentId: string; group: string };
}

export async function buildTaskRunView(store: TaskRunStore, record: TaskRunRecord): Promise<TaskRunView> {
  const plan = await store.getPlan(record.runId);
  const { state, results } = assembleSchedule(plan, record.schedule, await store.getChunks(record.runId, record.chunkCount));
  const report = taskRunReport(state);
  const byNode: TaskRunView['results'] = {};
  for (const [op, result] of results) {
    const slash = op.indexOf('/');
    (byNode[op.slice(0, slash)] ??= {})[op.slice(slash + 1)] = result;
  }
  return {
    runId: record.runId,
    status: record.status,
    nodes: report.nodes,
    blocked: report.blocked,
    errors: report.errors,
    leftAlone: report.leftAlone,
    results: byNode,
    counts: record.counts,
    nodeCount: record.nodeCount,
    settings: record.settings,
    dropped: plan.dropped,
    warnings: plan.warnings.map((w) => `${w.field}: ${w.message}`),
    createdAt: record.createdAt,
    ...(record.wallCreatedAt ? { wallCreatedAt: record.wallCreatedAt } : {}),
    timeBase: record.simulatedTime ? 'simulated' : 'wall-clock',
    ...(record.finishedAt === undefined ? {} : { elapsedSeconds: (record.finishedAt - record.startedAt) / 1000 }),
    ...(record.deployment ? { deployment: record.deployment } : {}),
  };
}
