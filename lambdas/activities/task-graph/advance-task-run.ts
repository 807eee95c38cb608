import { describeError, SiteServiceError, StaleWriteError, TaskRunNotFoundError } from '../../../core/errors';
import { claimantOf, HELD_BY_ANOTHER_CONTROL_PLANE } from '../../../core/site/node-claims';
import { shortList } from '../../../core/text';
import { isTaskRunSettled, type TaskRunStatus } from '../../../ports/task-run-store';
import { CommandTransportError } from '../../../adapters/site/commands/command-errors';
import { holdersText, refuseClaimedElsewhere, renewHeld, sayOnce, takeLocks } from '../node-claims';
import { taskRunLeaseSeconds } from './dependencies';
import type { NodeObservation, Observations, OperationOutcome, ScheduleState } from '../../../core/scheduling';
import {
  assembleSchedule,
  cancelTaskRun,
  chunkSchedule,
  countTaskStates,
  isBarrier,
  nextTaskStarts,
  recordTaskOutcomes,
  scheduleFieldsOf,
  settledNodes,
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
    // STOPPED ends the workflow as an end does: a stopped run waits for a person's resume, not for another pass.
    done: isTaskRunSettled(r.status),
    waitSeconds,
    iteration: event.iteration + 1,
  });
  if (record.increment !== event.increment || isTaskRunSettled(record.status)) return next(record, 0);
  try {
    return await pass(event, record, deps, next);
  } catch (err) {
    // A site call that failed or timed out is said at once, in the run's messages (said once while it lasts); the workflow retries.
    if (err instanceof SiteServiceError || err instanceof CommandTransportError) {
      await sayOnce(deps.store.messages, record.runId, `Pass ${record.increment} failed - ${describeError(err)}`);
    }
    throw err;
  }
}

async function pass(
  event: TaskRunPointer,
  record: TaskRunRecord,
  deps: TaskGraphDependencies,
  next: (r: Pick<TaskRunRecord, 'increment' | 'status'>, waitSeconds: number) => TaskRunPointer,
): Promise<TaskRunPointer> {
  const plan = await deps.store.getPlan(record.runId);
  const stored = await deps.store.getChunks(record.runId, record.chunkCount);
  const assembled = assembleSchedule(plan, record.schedule, stored);
  const { executions, results, lockTokens } = assembled;
  let state = assembled.state;
  const now = deps.clock.now();
  // A group's deploy phase works on nodes its deployment holds since their prepare: under the deployment's locks.
  const owner = record.deployment?.deploymentId ?? record.runId;
  const lease = taskRunLeaseSeconds(deps.settings, record.settings.pollIntervalSeconds);
  const invocationOf = invocations(plan, record);
  const messages: string[] = [];

  // A cancel (of the run, or of the deployment whose deploy phase it is) halts it: nothing starts, the tasks in flight finish.
  const windDown = await windingDown(deps, record);
  const cancelled = windDown === 'cancel';
  if (cancelled) state = cancelTaskRun(state, now);
  // A stop (the run's, or its deployment's) pauses the annealer: no task starts; once none is in flight the run ends STOPPED.
  const stopping = windDown === 'stop';
  // Task runs pause for nothing else: a resumed run (RUNNING again) starts tasks again.
  if (state.paused !== stopping) state = { ...state, paused: stopping };

  // The heartbeat, a quarter lease apart: the leases of the nodes the run holds; a node another run
  // took over is left alone from now on.
  const heartbeat = now - (event.locksRenewedAt ?? -Infinity) >= (lease * 1000) / 4;
  const lost = heartbeat ? await renewHeld(deps.locks, owner, lockTokens, lease) : new Map<string, string | undefined>();
  for (const node of lost.keys()) lockTokens.delete(node);
  if (lost.size > 0) messages.push(`${lost.size} node(s) no longer ours (lock lost${describeHolders(lost)}): left alone: ${shortList([...lost.keys()])}`);

  // The tasks in flight: record each that ended; start again any whose start was never stored.
  const inFlight = state.ops.filter((op) => op.state === 'TRANSITION' && !isBarrier(op.id) && !lost.has(op.node));
  const unstarted = inFlight.filter((op) => !executions.has(op.id)).map((op) => op.id);
  const running: RunningTask[] = inFlight
    .filter((op) => executions.has(op.id))
    .map((op) => ({ invocation: invocationOf(op.id), execution: executions.get(op.id)!, startedAt: op.startedAt ?? now }));
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
  // A task in flight on a node whose lock was lost ends here: the run no longer acts on that node.
  for (const op of state.ops)
    if (op.state === 'TRANSITION' && lost.has(op.node)) ended.set(op.id, { ok: false, error: `lock lost to ${lost.get(op.node) ?? 'nobody'}` });
  state = recordTaskOutcomes(state, ended, now);

  // What may start: the gates, then the nodes' locks (a node another run holds waits; one another
  // control plane claims at the site is left alone), until every node a start needs is ours.
  const seen: Record<string, NodeObservation> = { ...(await observe(deps, state)).nodes };
  const observations: Observations = { nodes: seen };
  for (const node of lost.keys()) seen[node] = { ...seen[node], lockLost: true };
  const policy = taskRunPolicy(plan, record.settings.maxInTransition);
  const takenNow = new Set<string>();
  const waits = new Map<string, string>();
  const claimedElsewhere = new Map<string, string>();
  let decided = nextTaskStarts(state, policy, now, observations);
  for (;;) {
    const wanted = [...new Set(decided.starts.map((start) => start.node))].filter((node) => !lockTokens.has(node));
    if (wanted.length === 0) break;
    const { locked, heldByOthers } = await takeLocks(deps.locks, owner, wanted, lease, 'each');
    const claimed = await refuseClaimedElsewhere({ locks: deps.locks, workloadManager: deps.workloadManager }, owner, [...locked.keys()]);
    for (const [node, token] of locked) {
      if (claimed.has(node)) continue;
      lockTokens.set(node, token);
      takenNow.add(node);
    }
    for (const [node, holder] of heldByOthers) {
      waits.set(node, holder);
      seen[node] = { ...seen[node], heldBy: holder };
    }
    for (const [node, run] of claimed) {
      claimedElsewhere.set(node, run);
      seen[node] = { ...seen[node], claimedElsewhere: true };
    }
    if (heldByOthers.size === 0 && claimed.size === 0) break;
    decided = nextTaskStarts(state, policy, now, observations);
  }
  state = decided.state;
  // Taken for a start a later round of the loop dropped: given back, not held idle.
  const starting = new Set(decided.starts.map((start) => start.node));
  const idle = [...takenNow].filter((node) => !starting.has(node));
  for (const node of idle) {
    lockTokens.delete(node);
    takenNow.delete(node);
  }
  if (idle.length > 0) await deps.locks.releaseNodeLocks(owner, idle);
  if (waits.size > 0) messages.push(`Waiting for nodes another run holds: ${holdersText(waits)}`);
  if (claimedElsewhere.size > 0) {
    messages.push(
      `${claimedElsewhere.size} node(s) left alone, ${HELD_BY_ANOTHER_CONTROL_PLANE}: the site shows them claimed by run ${[...new Set(claimedElsewhere.values())].join(', ')}, which this control plane does not know: ${shortList([...claimedElsewhere.keys()])}`,
    );
  }

  // Fencing: the nodes about to change are checked against their tokens right before the first site call.
  const fenced = await renewHeld(
    deps.locks,
    owner,
    new Map([...starting].filter((node) => !takenNow.has(node)).map((node) => [node, lockTokens.get(node)!])),
    lease,
  );
  if (fenced.size > 0) {
    // Taken over since the last heartbeat: nothing was done nor stored; the pass runs again at once, with a heartbeat that records the loss.
    const { locksRenewedAt: _renewed, ...again } = next(record, 0);
    return again;
  }
  const toStart = [...unstarted.filter((op) => !lost.has(nodeOf(op))), ...decided.starts.map((start) => start.op)];
  if (toStart.length > 0) {
    const started = await deps.executor.start(toStart.map(invocationOf));
    for (const [op, execution] of started) executions.set(op, execution);
  }

  // The nodes the run is done with go back at once; all of them once it has finished or stopped.
  const finished = decided.finished;
  const stopped = stopping && !finished && !state.ops.some((op) => op.state === 'TRANSITION' && !isBarrier(op.id));
  const over = finished || stopped;
  if (finished && cancelled) messages.push(await liftOwnDrains(deps, record, state, results));
  const settled = over ? [...lockTokens.keys()] : settledNodes(state, lockTokens.keys());
  const status: TaskRunStatus = finished
    ? cancelled
      ? 'CANCELLED'
      : taskRunReport(state).status === 'succeeded'
        ? 'SUCCEEDED'
        : 'FAILED'
    : stopped
      ? 'STOPPED'
      : cancelled
        ? 'CANCELLING'
        : stopping
          ? 'STOPPING'
          : 'RUNNING';
  const chunks = chunkSchedule(plan, state, executions, results, new Map([...lockTokens].filter(([node]) => !settled.includes(node))));
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
  // Released after the commit: a retried pass that finds the run moved on never acts on them again.
  if (settled.length > 0) await deps.locks.releaseNodeLocks(owner, settled);
  for (const message of messages) await sayOnce(deps.store.messages, record.runId, message);
  if (over) await deps.store.messages.append(record.runId, `Task run ${status}`);
  const pointer = next({ increment: record.increment + 1, status }, over ? 0 : waitSeconds(state, record, plan, decided.recheckAt, now));
  return heartbeat ? { ...pointer, locksRenewedAt: now } : pointer;
}

const nodeOf = (op: string) => op.slice(0, op.indexOf('/'));

function describeHolders(lost: ReadonlyMap<string, string | undefined>): string {
  const holders = [...new Set([...lost.values()].filter((h) => h !== undefined))];
  return holders.length > 0 ? ` to run ${holders.join(', ')}` : '';
}

/**
 * The run's own cancel or stop request, or its deployment's: a group's deploy phase is cancelled or
 * stopped with its deployment (a stopped one is carried on when the deployment is resumed).
 */
async function windingDown(deps: TaskGraphDependencies, record: TaskRunRecord): Promise<'cancel' | 'stop' | undefined> {
  if (record.status === 'CANCELLING') return 'cancel';
  const deployment = record.deployment && (await deps.deployments.getDeployment(record.deployment.deploymentId))?.status;
  if (deployment === 'CANCELLING') return 'cancel';
  return record.status === 'STOPPING' || deployment === 'STOPPING' ? 'stop' : undefined;
}

/**
 * A cancel never leaves a node drained by the run: each node whose drain task ran and whose Slurm
 * reason still shows this run's claim (no one drained it since) gets the drain lifted.
 */
async function liftOwnDrains(deps: TaskGraphDependencies, record: TaskRunRecord, state: ScheduleState, results: ReadonlyMap<string, string>): Promise<string> {
  const plan = await deps.store.getPlan(record.runId);
  const drained = [
    ...new Set(
      state.ops
        .filter((op) => results.get(op.id) === 'ok' && plan.nodes[op.node]?.find((t) => `${op.node}/${t.id}` === op.id)?.type === 'drain')
        .map((op) => op.node),
    ),
  ];
  const wlm = drained.length > 0 ? await deps.workloadManager.getNodes(drained) : new Map();
  const ours = drained.filter((node) => claimantOf(wlm.get(node)?.reason) === record.runId && wlm.get(node)?.flags.includes('DRAIN'));
  if (ours.length > 0) await deps.workloadManager.resumeNodes(ours);
  return ours.length > 0 ? `Cancelled: the run's drain lifted on ${shortList(ours)}` : 'Cancelled: no node is left drained by the run';
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
      runId: record.runId,
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
    if (waiting.has(node.name) && (node.alive === false || node.available === false))
      nodes[node.name] = { alive: node.alive !== false, available: node.available !== false };
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
