import { describeError, SiteServiceError, StaleWriteError, TaskRunNotFoundError } from '../../../core/errors';
import { isTaskRunSettled } from '../../../ports/task-run-store';
import { CommandTransportError } from '../../../ports/command-transport';
import { heartbeatDue, refuseClaimedElsewhere, renewHeld, sayOnce, takeLocks } from '../node-claims';
import { taskRunLeaseSeconds } from './dependencies';
import {
  addStartLocks,
  assembleSchedule,
  changedChunks,
  chunkSchedule,
  concludeTaskRunPass,
  countTaskStates,
  decideTaskStarts,
  NO_START_LOCKS,
  nodesAwaitingStart,
  ownDrainsToLift,
  plannedTask,
  scheduleFieldsOf,
  settleTaskRunPass,
  taskRunGates,
  taskTimeoutSeconds,
  tasksInFlight,
  type SettledTaskRun,
  type StartLocks,
  type TaskAnswer,
  type TaskRunChunk,
  type TaskRunPassDecision,
  type TaskRunPassInput,
  type TaskRunPlan,
  type TaskRunWindDown,
} from '../../../core/task-graph';
import type { TaskInvocation } from '../../../ports/task-executor';
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

/** What a pass works with besides its decision: who holds the locks, their lease, the clock, and what was read. */
interface PassContext {
  record: TaskRunRecord;
  /** A group's deploy phase works on nodes its deployment holds since their prepare: under the deployment's locks. */
  owner: string;
  lease: number;
  now: number;
  heartbeat: boolean;
  plan: TaskRunPlan;
  stored: TaskRunChunk[];
}

type Next = (r: Pick<TaskRunRecord, 'increment' | 'status'>, waitSeconds: number) => TaskRunPointer;

/** One pass: load (the reads, the heartbeat, a look at the tasks in flight), decide (core/task-graph/task-run-pass.ts), apply. */
async function pass(event: TaskRunPointer, record: TaskRunRecord, deps: TaskGraphDependencies, next: Next): Promise<TaskRunPointer> {
  const { context, input } = await loadPass(event, record, deps);
  const settled = settleTaskRunPass(input);
  const { starts, locks } = await lockStarts(deps, context, settled);
  const decision = concludeTaskRunPass(settled, starts, locks);
  if (decision.idle.length > 0) await deps.locks.releaseNodeLocks(context.owner, decision.idle);
  // Fencing: the nodes about to change are checked against their tokens right before the first site call.
  if ((await renewHeld(deps.locks, context.owner, decision.fence, context.lease)).size > 0) {
    // Taken over since the last heartbeat: nothing was done nor stored; the pass runs again at once, with a heartbeat that records the loss.
    const { locksRenewedAt: _renewed, ...again } = next(record, 0);
    return again;
  }
  return applyPass(deps, context, settled, decision, next);
}

/** The reads of a pass, in this order: the plan and the chunks, the wind-down, the heartbeat (a quarter lease apart), the tasks in flight, the gates. */
async function loadPass(event: TaskRunPointer, record: TaskRunRecord, deps: TaskGraphDependencies): Promise<{ context: PassContext; input: TaskRunPassInput }> {
  const plan = await deps.store.getPlan(record.runId);
  const stored = await deps.store.getChunks(record.runId, record.chunkCount);
  const schedule = assembleSchedule(plan, record.schedule, stored);
  const now = deps.clock.now();
  const owner = record.deployment?.deploymentId ?? record.runId;
  const lease = taskRunLeaseSeconds(deps.settings, record.settings.pollIntervalSeconds);
  const windDown = await windingDown(deps, record);
  // The leases of the nodes the run holds; a node another run took over is left alone from now on.
  const heartbeat = heartbeatDue(event.locksRenewedAt, now, lease);
  const lost = heartbeat ? await renewHeld(deps.locks, owner, schedule.lockTokens, lease) : new Map<string, string | undefined>();
  const { running } = tasksInFlight(schedule, lost);
  const invocationOf = invocations(plan, record);
  const answers: Map<string, TaskAnswer> =
    running.length > 0
      ? await deps.executor.poll(running.map(({ op, execution }) => ({ invocation: invocationOf(op.id), execution, startedAt: op.startedAt ?? now })))
      : new Map();
  const awaiting = nodesAwaitingStart(schedule.state);
  const gates = awaiting.size > 0 ? taskRunGates(awaiting, await deps.inventory.listNodes()) : {};
  return {
    context: { record, owner, lease, now, heartbeat, plan, stored },
    input: { runId: record.runId, settings: record.settings, plan, stored: schedule, windDown, lost, answers, gates, now },
  };
}

/**
 * The run's own cancel or stop request, or its deployment's: a group's deploy phase is cancelled or
 * stopped with its deployment (a stopped one is carried on when the deployment is resumed).
 */
async function windingDown(deps: TaskGraphDependencies, record: TaskRunRecord): Promise<TaskRunWindDown> {
  if (record.status === 'CANCELLING') return 'cancel';
  const deployment = record.deployment && (await deps.deployments.getDeployment(record.deployment.deploymentId))?.status;
  if (deployment === 'CANCELLING') return 'cancel';
  return record.status === 'STOPPING' || deployment === 'STOPPING' ? 'stop' : undefined;
}

/**
 * The locks of the nodes the starts need, each on its own: a node another run holds waits, one
 * another control plane claims at the site is left alone; the starts are decided again until every
 * node a start needs is ours.
 */
async function lockStarts(
  deps: TaskGraphDependencies,
  { owner, lease }: PassContext,
  settled: SettledTaskRun,
): Promise<{ starts: ReturnType<typeof decideTaskStarts>; locks: StartLocks }> {
  let locks = NO_START_LOCKS;
  let starts = decideTaskStarts(settled, locks);
  while (starts.toLock.length > 0) {
    const { locked, heldByOthers } = await takeLocks(deps.locks, owner, starts.toLock, lease, 'each');
    const claimedElsewhere = await refuseClaimedElsewhere({ locks: deps.locks, workloadManager: deps.workloadManager }, owner, [...locked.keys()]);
    const taken = new Map([...locked].filter(([node]) => !claimedElsewhere.has(node)));
    locks = addStartLocks(locks, { taken, heldByOthers, claimedElsewhere });
    if (heldByOthers.size === 0 && claimedElsewhere.size === 0) break;
    starts = decideTaskStarts(settled, locks);
  }
  return { starts, locks };
}

/**
 * The writes of a pass, in this order: the starts at the site, a finished cancel's drains lifted, the
 * chunks that changed, the record with the increment bumped (a retried pass that finds the run moved
 * on does nothing more), then the locks of the nodes the run is done with, and the messages.
 */
async function applyPass(
  deps: TaskGraphDependencies,
  { record, owner, now, heartbeat, plan, stored }: PassContext,
  settled: SettledTaskRun,
  decision: TaskRunPassDecision,
  next: Next,
): Promise<TaskRunPointer> {
  const executions = new Map(settled.executions);
  if (decision.toStart.length > 0) {
    const invocationOf = invocations(plan, record);
    for (const [op, execution] of await deps.executor.start(decision.toStart.map(invocationOf))) executions.set(op, execution);
  }
  const messages = [...decision.messages];
  if (decision.liftDrainsOf) messages.push(await liftOwnDrains(deps, record, decision.liftDrainsOf));
  const { state, over, status } = decision;
  await deps.store.putChunks(record.runId, changedChunks(chunkSchedule(plan, state, executions, settled.results, decision.held), stored));
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
  if (decision.release.length > 0) await deps.locks.releaseNodeLocks(owner, decision.release);
  for (const message of messages) await sayOnce(deps.store.messages, record.runId, message);
  if (over) await deps.store.messages.append(record.runId, `Task run ${status}`);
  const pointer = next({ increment: record.increment + 1, status }, decision.waitSeconds);
  return heartbeat ? { ...pointer, locksRenewedAt: now } : pointer;
}

/** A finished cancel lifts the run's own drains (core: ownDrainsToLift) and says so. */
async function liftOwnDrains(deps: TaskGraphDependencies, record: TaskRunRecord, drained: readonly string[]): Promise<string> {
  const wlm = drained.length > 0 ? await deps.workloadManager.getNodes(drained) : new Map();
  const lift = ownDrainsToLift(record.runId, drained, wlm);
  if (lift.nodes.length > 0) await deps.workloadManager.resumeNodes(lift.nodes);
  return lift.message;
}

/** Each operation's invocation: its node's planned task, the merged parameters, its timeout and a name unique to the run. */
function invocations(plan: TaskRunPlan, record: TaskRunRecord): (op: string) => TaskInvocation {
  const rank = new Map(plan.operations.map((spec, i) => [spec.id, i]));
  return (op) => {
    const planned = plannedTask(plan, op);
    if (!planned) throw new Error(`task run ${record.runId}: operation ${op} is not in the plan`);
    const slash = op.indexOf('/');
    return {
      op,
      node: op.slice(0, slash),
      task: op.slice(slash + 1),
      type: planned.type,
      parameters: planned.parameters,
      timeoutSeconds: taskTimeoutSeconds(planned.parameters, record.settings),
      name: `rollout-task-${record.runId}-${rank.get(op)}`,
      runId: record.runId,
    };
  };
}
