import { StaleWriteError, TaskRunNotFoundError } from '../../../core/errors';
import type { Observations, OperationOutcome, ScheduleState } from '../../../core/scheduling';
import {
  assembleSchedule,
  chunkSchedule,
  countTaskStates,
  isBarrier,
  nextTaskStarts,
  recordTaskOutcomes,
  scheduleFieldsOf,
  taskRunPolicy,
  taskRunReport,
  type TaskExecution,
  type TaskRunPlan,
} from '../../../core/task-graph';
import type { RunningTask, TaskInvocation, TaskOutcome } from '../../../ports/task-executor';
import type { TaskRunRecord } from '../../../ports/task-run-store';
import type { TaskGraphDependencies } from './dependencies';
import type { TaskRunPointer } from './open-task-run';

/**
 * One pass of the annealer over a task run, idempotent: look at the tasks in flight and record
 * each that ended (ok, failed, or past its timeout); read the alive / available gates; start what
 * may start now (one transition per node, the role groups' caps, the global cap); store the chunks
 * that changed, then the record with the increment bumped. A retried pass (the record moved on)
 * does nothing and points at where the run is.
 *
 * A task whose start reached the site but whose execution was not stored (the invocation died in
 * between) is started again by the next attempt: tasks run at least once, as Fuel's are written to.
 */
export async function advanceTaskRun(event: TaskRunPointer, deps: TaskGraphDependencies): Promise<TaskRunPointer> {
  const record = await deps.store.getRun(event.runId);
  if (!record) throw new TaskRunNotFoundError(event.runId);
  const next = (r: Pick<TaskRunRecord, 'increment' | 'status'>, waitSeconds: number): TaskRunPointer => ({
    ...event,
    increment: r.increment,
    status: r.status,
    done: r.status !== 'RUNNING',
    waitSeconds,
    iteration: event.iteration + 1,
  });
  if (record.increment !== event.increment || record.status !== 'RUNNING') return next(record, 0);

  const plan = await deps.store.getPlan(record.runId);
  const stored = await deps.store.getChunks(record.runId, record.chunkCount);
  const assembled = assembleSchedule(plan, record.schedule, stored);
  const { executions, results } = assembled;
  let state = assembled.state;
  const now = deps.clock.now();
  const invocationOf = invocations(plan, record);

  // The tasks in flight: record each that ended; start again any whose start was never stored.
  const inFlight = state.ops.filter((op) => op.state === 'TRANSITION' && !isBarrier(op.id));
  const unstarted = inFlight.filter((op) => !executions.has(op.id)).map((op) => op.id);
  const running: RunningTask[] = inFlight.filter((op) => executions.has(op.id)).map((op) => ({ invocation: invocationOf(op.id), execution: executions.get(op.id)!, startedAt: op.startedAt ?? now }));
  const looked = running.length > 0 ? await deps.executor.poll(running) : new Map<string, { outcome?: TaskOutcome; execution?: TaskExecution }>();
  const ended = new Map<string, OperationOutcome>();
  for (const task of running) {
    const { op } = task.invocation;
    const seen = looked.get(op);
    if (seen?.execution) executions.set(op, seen.execution);
    const outcome = seen?.outcome ?? timedOut(task, now);
    if (!outcome) continue;
    ended.set(op, outcome.result === 'ok' ? { ok: true } : { ok: false, error: describeOutcome(outcome) });
    results.set(op, outcome.result);
    executions.delete(op);
  }
  state = recordTaskOutcomes(state, ended, now);

  // A stop request pauses the annealer: no task starts; once none is in flight the run ends STOPPED.
  const stopping = record.stopRequested === true;
  if (stopping) state = { ...state, paused: true };
  const pass = nextTaskStarts(state, taskRunPolicy(plan, record.settings.maxInTransition), now, await observe(deps, state));
  state = pass.state;
  const toStart = [...unstarted, ...pass.starts.map((start) => start.op)];
  if (toStart.length > 0) {
    const started = await deps.executor.start(toStart.map(invocationOf));
    for (const [op, execution] of started) executions.set(op, execution);
  }

  const stopped = stopping && !pass.finished && !state.ops.some((op) => op.state === 'TRANSITION' && !isBarrier(op.id));
  const status = pass.finished ? (taskRunReport(state).status === 'succeeded' ? 'SUCCEEDED' : 'FAILED') : stopped ? 'STOPPED' : 'RUNNING';
  const over = pass.finished || stopped;
  const chunks = chunkSchedule(plan, state, executions, results);
  const changed = new Map(chunks.flatMap((chunk, i) => (JSON.stringify(chunk) === JSON.stringify(stored[i]) ? [] : [[i, chunk] as const])));
  await deps.store.putChunks(record.runId, changed);
  try {
    await deps.store.commitIncrement(record.runId, record.increment, {
      schedule: scheduleFieldsOf(state),
      counts: countTaskStates(state),
      status,
      ...(over ? { finishedAt: now } : {}),
    });
  } catch (err) {
    if (!(err instanceof StaleWriteError)) throw err;
    const fresh = await deps.store.getRun(record.runId);
    return next(fresh ?? record, 0);
  }
  return next({ increment: record.increment + 1, status }, over ? 0 : waitSeconds(state, record, plan, pass.recheckAt, now));
}

/** Each operation's invocation: its node's planned task, the merged parameters, its timeout and a name unique to the run. */
function invocations(plan: TaskRunPlan, record: TaskRunRecord): (op: string) => TaskInvocation {
  const rank = new Map(plan.operations.map((spec, i) => [spec.id, i]));
  return (op) => {
    const slash = op.indexOf('/');
    const node = op.slice(0, slash);
    const task = op.slice(slash + 1);
    const planned = plan.nodes[node]?.find((t) => t.id === task);
    if (!planned) throw new Error(`task run ${record.runId}: operation ${op} is not in the plan`);
    return {
      op,
      node,
      task,
      type: planned.type,
      parameters: planned.parameters,
      timeoutSeconds: timeoutOf(planned.parameters, record),
      name: `rollout-task-${record.runId}-${rank.get(op)}`,
    };
  };
}

function timeoutOf(parameters: Record<string, unknown>, record: Pick<TaskRunRecord, 'settings'>): number {
  const own = parameters.timeout;
  return typeof own === 'number' && own > 0 ? own : record.settings.taskTimeoutSeconds;
}

/**
 * How long past its timeout a task may take to report: the node's own `timeout` stops a command at
 * its timeout, and the outcome still has to travel back (pdsh, SSM).
 */
export const TIMEOUT_GRACE_SECONDS = 60;

/** A task the site still reports running well after its timeout ended as `timeout` (the site's own timeout normally says so first). */
function timedOut(task: RunningTask, now: number): TaskOutcome | undefined {
  const limit = task.invocation.timeoutSeconds + TIMEOUT_GRACE_SECONDS;
  return now - task.startedAt >= limit * 1000 ? { result: 'timeout', detail: `no outcome ${limit} s after it started` } : undefined;
}

function describeOutcome(outcome: TaskOutcome): string {
  return outcome.detail ? `${outcome.result}: ${outcome.detail}` : outcome.result;
}

/**
 * OpenCrowbar's gates, from the inventory: a node not alive or not available starts nothing. Read
 * while some task may still start (BLOCKED ones too: a barrier settled within the pass frees them).
 */
async function observe(deps: TaskGraphDependencies, state: ScheduleState): Promise<Observations> {
  const waiting = new Set(state.ops.filter((op) => (op.state === 'TODO' || op.state === 'BLOCKED') && !isBarrier(op.id)).map((op) => op.node));
  if (waiting.size === 0) return { nodes: {} };
  const nodes: Record<string, { alive?: boolean; available?: boolean }> = {};
  for (const node of await deps.inventory.listNodes()) {
    if (waiting.has(node.name) && (node.alive === false || node.available === false)) nodes[node.name] = { alive: node.alive !== false, available: node.available !== false };
  }
  return { nodes };
}

/** Tasks in flight: look again at the poll interval, or sooner when one reaches its timeout; nothing in flight: at a recheck, or the poll interval. */
function waitSeconds(state: ScheduleState, record: TaskRunRecord, plan: TaskRunPlan, recheckAt: number | undefined, now: number): number {
  const poll = record.settings.pollIntervalSeconds;
  const invocationOf = invocations(plan, record);
  let wait = poll;
  for (const op of state.ops) {
    if (op.state !== 'TRANSITION' || isBarrier(op.id)) continue;
    // Look right at the timeout, when the site reports it, then at the end of the grace.
    const startedAt = op.startedAt ?? now;
    const timeout = invocationOf(op.id).timeoutSeconds;
    const deadline = [timeout, timeout + TIMEOUT_GRACE_SECONDS].map((s) => startedAt + s * 1000).find((at) => at > now);
    if (deadline !== undefined) wait = Math.min(wait, Math.max(1, Math.ceil((deadline - now) / 1000)));
  }
  if (recheckAt !== undefined) wait = Math.min(wait, Math.max(1, Math.ceil((recheckAt - now) / 1000)));
  return wait;
}
