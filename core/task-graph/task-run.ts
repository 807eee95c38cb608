import {
  applyDecision,
  basePolicy,
  commitSchedule,
  failedAncestors,
  proposeSchedule,
  recordOutcome,
  recordOutcomes,
  schedule,
  type Observations,
  type OperationOutcome,
  type OperationState,
  type ScheduleState,
  type SchedulingPolicy,
  type WaitReason,
} from '../scheduling';
import { InvalidInputError } from '../errors';
import { idForExecution } from '../execution-id';
import { isBarrier, type TaskPlan } from './task-plan';

/**
 * Running a task plan on the annealer: the pure steps a workflow activity takes on each pass.
 * The run's state is the annealer's ScheduleState (plain JSON: the workflow stores it); barriers
 * are settled inside a pass, so the caller only ever sees node tasks to start.
 */

/** The annealer's policy for a task run: refill as slots free, the role groups' caps, a global cap. */
export function taskRunPolicy(plan: Pick<TaskPlan, 'groupLimits'>, maxInTransition: number, overrides: Partial<SchedulingPolicy> = {}): SchedulingPolicy {
  return basePolicy({ maxInTransition, groupLimits: plan.groupLimits, ...overrides });
}

/** Proposes and commits the plan's operations (OpenCrowbar: PROPOSED, then TODO or BLOCKED). */
export function startTaskRun(plan: Pick<TaskPlan, 'operations'>): ScheduleState {
  return commitSchedule(proposeSchedule(plan.operations));
}

export interface TaskStart {
  op: string;
  node: string;
  task: string;
}

export interface TaskPass {
  state: ScheduleState;
  /** Node tasks now in TRANSITION: run them on the site, then record each outcome. */
  starts: TaskStart[];
  /** Nothing runs and nothing will start: the run is over. */
  finished: boolean;
  wait?: WaitReason;
  recheckAt?: number;
  /** Node tasks that wait for their node's lock, which another run holds (they start once it is free). */
  lockWaits?: { op: string; holder: string }[];
}

/** One pass of the annealer: starts what may start now (barriers settle at once, they do no work). */
export function nextTaskStarts(state: ScheduleState, policy: SchedulingPolicy, now: number, observations: Observations = { nodes: {} }): TaskPass {
  const starts: TaskStart[] = [];
  // Each barrier settled may free more ops; a chain of them is at most as long as the plan has barriers.
  for (;;) {
    const decision = schedule(state, policy, now, observations);
    state = applyDecision(state, decision, now);
    for (const { op } of decision.start) {
      if (isBarrier(op)) continue;
      const slash = op.indexOf('/');
      starts.push({ op, node: op.slice(0, slash), task: op.slice(slash + 1) });
    }
    const barriers = decision.start.filter((s) => isBarrier(s.op));
    if (barriers.length === 0 || decision.finished) {
      return {
        state,
        starts,
        finished: decision.finished,
        ...(decision.wait ? { wait: decision.wait } : {}),
        ...(decision.recheckAt === undefined ? {} : { recheckAt: decision.recheckAt }),
        ...(decision.lockWaits ? { lockWaits: decision.lockWaits } : {}),
      };
    }
    for (const { op } of barriers) state = recordOutcome(state, op, { ok: true }, now);
  }
}

/**
 * The nodes the run is done with: no task of theirs runs or may still start (each is ACTIVE, ERROR,
 * left alone, or blocked behind a failure). Their locks go back at once, not at the run's end.
 */
export function settledNodes(state: ScheduleState, nodes: Iterable<string>): string[] {
  const open = new Set<string>();
  for (const op of state.ops) {
    if (isBarrier(op.id) || open.has(op.node)) continue;
    const pending =
      op.state === 'TODO' ||
      op.state === 'TRANSITION' ||
      op.state === 'PROPOSED' ||
      (op.state === 'BLOCKED' && op.leftAlone === undefined && failedAncestors(state, op.id).length === 0);
    if (pending) open.add(op.node);
  }
  return [...nodes].filter((node) => !open.has(node));
}

/** The reason a cancelled run halts with: nothing starts after it, the tasks in flight finish, the rest is left alone. */
export const CANCELLED_REASON = 'cancelled';

/** Cancels a run: it halts (no task starts; those in flight run to their end), once. */
export function cancelTaskRun(state: ScheduleState, now: number): ScheduleState {
  return state.halted ? state : { ...state, halted: { reason: CANCELLED_REASON, at: now } };
}

/** A node task ended: `ok`, or failed with what went wrong. A failure blocks the node's later tasks and its dependants on other nodes. */
export function recordTaskOutcome(state: ScheduleState, op: string, outcome: OperationOutcome, now: number): ScheduleState {
  return recordOutcome(state, op, outcome, now);
}

/** The node tasks that ended since the last look, recorded together. */
export function recordTaskOutcomes(state: ScheduleState, outcomes: ReadonlyMap<string, OperationOutcome>, now: number): ScheduleState {
  return recordOutcomes(state, outcomes, now);
}

export type TaskRunStatus = 'running' | 'succeeded' | 'failed';

/** `rollout deploy --graph --json`: each node's task states, and why each blocked task is blocked. */
export interface TaskRunReport {
  status: TaskRunStatus;
  nodes: Record<string, Record<string, OperationState>>;
  /** node -> task -> the failed node tasks (`node/task`) it waits behind. */
  blocked: Record<string, Record<string, string[]>>;
  /** node -> task -> what went wrong. */
  errors: Record<string, Record<string, string>>;
  /** node -> task -> why it was left alone (a gated node, a halt). */
  leftAlone: Record<string, Record<string, string>>;
}

export function taskRunReport(state: ScheduleState): TaskRunReport {
  const report: TaskRunReport = { status: 'running', nodes: {}, blocked: {}, errors: {}, leftAlone: {} };
  const put = <T>(into: Record<string, Record<string, T>>, node: string, task: string, value: T) => {
    (into[node] ??= {})[task] = value;
  };
  let failed = false;
  for (const op of state.ops) {
    if (isBarrier(op.id)) continue;
    const task = op.id.slice(op.node.length + 1);
    put(report.nodes, op.node, task, op.state);
    if (op.state === 'ERROR') {
      failed = true;
      put(report.errors, op.node, task, op.error ?? 'failed');
    }
    if (op.state === 'BLOCKED') {
      const behind = op.blockedBy ?? failedAncestors(state, op.id);
      if (behind.length > 0) put(report.blocked, op.node, task, behind);
    }
    if (op.leftAlone !== undefined) {
      failed = true;
      put(report.leftAlone, op.node, task, op.leftAlone);
    }
  }
  if (state.finishedAt !== undefined) report.status = failed || Object.keys(report.blocked).length > 0 ? 'failed' : 'succeeded';
  return report;
}

/**
 * The nodes whose every task ended ACTIVE: what a group deployment counts as deployed. A node the
 * graph gives no task (no role of it) has nothing left to do: it counts too.
 */
export function nodesAllActive(nodes: readonly string[], state: ScheduleState): string[] {
  const notDone = new Set(state.ops.filter((op) => !isBarrier(op.id) && op.state !== 'ACTIVE').map((op) => op.node));
  return nodes.filter((node) => !notDone.has(node));
}

/** The run of a group deployment's deploy phase: one per deployment and group, found again by every execution of that phase. */
export function groupTaskRunId(deploymentId: string, group: string): string {
  return idForExecution(`${deploymentId}/task-graph/${group}`);
}

/** A run must run something: a plan with no task on any node is refused, saying why (the selection, the conditions, or no node with a role). */
export function requireTaskRuns(plan: TaskPlan): TaskPlan {
  if (Object.keys(plan.nodes).length > 0) return plan;
  const why = plan.dropped.length > 0 ? plan.dropped.map((d) => `${d.task} (${d.reason})`).join(', ') : 'no node of the site has a role of the graph';
  throw new InvalidInputError('task run request', [{ field: 'selection', message: `no task would run on any node: ${why}` }]);
}
