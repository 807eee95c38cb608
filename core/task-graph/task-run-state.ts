import type { Operation, OperationSpec, OperationState, ScheduleState } from '../scheduling';
import { isBarrier, type TaskPlan } from './task-plan';

/**
 * A task run's state as a workflow stores it: the plan once (it never changes), the schedule's
 * run-wide fields on the run's record, and each operation's changing fields per node, in chunks of
 * nodes small enough for one DynamoDB item, so that 10,000 nodes fit and a node's task states can
 * be read on their own.
 */

/** How a run ended for one node task, as the site reported it. */
export type TaskResult = 'ok' | 'failed' | 'timeout';

/** What the executor keeps about a started task between two increments (a command's id, a boot session's name): small, plain JSON. */
export type TaskExecution = Record<string, unknown>;

/** An operation's changing fields; the plan holds the rest (id, node, group, requires, rank). */
export type OperationProgress = Omit<Operation, 'id' | 'node' | 'group' | 'requires' | 'rank'> & {
  /** TRANSITION: the executor's handle of the running task. */
  execution?: TaskExecution;
  /** ACTIVE or ERROR: what the site reported. */
  result?: TaskResult;
};

/** The run's hold on a node while its tasks change it: the fencing token of the node's lock (ports/node-locks.ts). */
export interface NodeLockProgress {
  lockToken: number;
}

/** Under each node of a chunk, the run's lock on it (task ids start with a letter or digit, so the key is no task's). */
export const NODE_LOCK_KEY = '#lock';

/**
 * One stored chunk: owner (a node, or a barrier's id) -> task id (`@` for a barrier) -> its progress;
 * and, under NODE_LOCK_KEY, the token of the node's lock while the run holds it.
 */
export type TaskRunChunk = Record<string, Record<string, OperationProgress | NodeLockProgress>>;

/** The plan a run keeps: the task plan, and which owners each chunk holds (nodes in plan order, then barriers). */
export interface TaskRunPlan extends TaskPlan {
  chunks: string[][];
}

/** The schedule's run-wide fields (kept on the run's record). */
export type ScheduleFields = Omit<ScheduleState, 'ops'>;

/** The operations each chunk may hold, at most: a chunk of ~2,000 small maps stays far below DynamoDB's 400 KB per item. */
export const MAX_OPERATIONS_PER_CHUNK = 2000;

const BARRIER_KEY = '@';

/** The task id an operation runs (`node/task`), or `@` for a barrier. */
export function taskKeyOf(op: Pick<OperationSpec, 'id' | 'node'>): string {
  return isBarrier(op.id) ? BARRIER_KEY : op.id.slice(op.node.length + 1);
}

/** The plan with its chunks: owners in the order their operations come, cut so that no chunk holds more than `maxPerChunk` operations. */
export function chunkTaskRunPlan(plan: TaskPlan, maxPerChunk = MAX_OPERATIONS_PER_CHUNK): TaskRunPlan {
  const counts = new Map<string, number>();
  for (const op of plan.operations) counts.set(op.node, (counts.get(op.node) ?? 0) + 1);
  const chunks: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const [owner, count] of counts) {
    if (current.length > 0 && size + count > maxPerChunk) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(owner);
    size += count;
  }
  if (current.length > 0) chunks.push(current);
  return { ...plan, chunks };
}

/** The schedule the annealer works on, from the plan, the run-wide fields and the stored chunks; plus the executions of the tasks in flight. */
export function assembleSchedule(
  plan: Pick<TaskRunPlan, 'operations'>,
  fields: ScheduleFields,
  chunks: readonly TaskRunChunk[],
): { state: ScheduleState; executions: Map<string, TaskExecution>; results: Map<string, TaskResult>; lockTokens: Map<string, number> } {
  const stored = new Map<string, TaskRunChunk[string]>();
  const lockTokens = new Map<string, number>();
  for (const chunk of chunks) {
    for (const [owner, ops] of Object.entries(chunk)) {
      stored.set(owner, ops);
      const lock = ops[NODE_LOCK_KEY] as NodeLockProgress | undefined;
      if (lock) lockTokens.set(owner, lock.lockToken);
    }
  }
  const executions = new Map<string, TaskExecution>();
  const results = new Map<string, TaskResult>();
  const ops = plan.operations.map((spec, rank): Operation => {
    const progress = stored.get(spec.node)?.[taskKeyOf(spec)] as OperationProgress | undefined;
    if (!progress) throw new Error(`task run state: no stored progress for operation ${spec.id}`);
    const { execution, result, ...fieldsOfOp } = progress;
    if (execution) executions.set(spec.id, execution);
    if (result) results.set(spec.id, result);
    return {
      ...fieldsOfOp,
      id: spec.id,
      node: spec.node,
      ...(spec.group === undefined ? {} : { group: spec.group }),
      requires: [...(spec.requires ?? [])],
      rank,
    };
  });
  return { state: { ...fields, ops }, executions, results, lockTokens };
}

/** The chunks of a schedule, each op's changing fields under its owner (what assembleSchedule reads back). */
export function chunkSchedule(
  plan: Pick<TaskRunPlan, 'chunks'>,
  state: ScheduleState,
  executions: ReadonlyMap<string, TaskExecution>,
  results: ReadonlyMap<string, TaskResult>,
  lockTokens: ReadonlyMap<string, number> = new Map(),
): TaskRunChunk[] {
  const byOwner = new Map<string, TaskRunChunk[string]>();
  for (const op of state.ops) {
    const { id, node, group: _group, requires: _requires, rank: _rank, ...progress } = op;
    const execution = op.state === 'TRANSITION' ? executions.get(id) : undefined;
    const result = results.get(id);
    const entry: OperationProgress = { ...progress, ...(execution ? { execution } : {}), ...(result ? { result } : {}) };
    const owned = byOwner.get(node) ?? {};
    owned[taskKeyOf(op)] = entry;
    byOwner.set(node, owned);
  }
  for (const [node, lockToken] of lockTokens) {
    const owned = byOwner.get(node);
    if (owned) owned[NODE_LOCK_KEY] = { lockToken } satisfies NodeLockProgress;
  }
  return plan.chunks.map((owners) => Object.fromEntries(owners.map((owner) => [owner, byOwner.get(owner) ?? {}])));
}

/** The chunks of a schedule that differ from those stored, by index: what a pass writes. */
export function changedChunks(chunks: readonly TaskRunChunk[], stored: readonly TaskRunChunk[]): Map<number, TaskRunChunk> {
  return new Map(chunks.flatMap((chunk, i) => (JSON.stringify(chunk) === JSON.stringify(stored[i]) ? [] : [[i, chunk] as const])));
}

/** Split the run-wide fields off a schedule. */
export function scheduleFieldsOf(state: ScheduleState): ScheduleFields {
  const { ops: _ops, ...fields } = state;
  return fields;
}

/** Node tasks by state (barriers left out): what a progress line shows. */
export function countTaskStates(state: ScheduleState): Record<OperationState, number> {
  const counts: Record<OperationState, number> = { PROPOSED: 0, TODO: 0, BLOCKED: 0, TRANSITION: 0, ACTIVE: 0, ERROR: 0 };
  for (const op of state.ops) if (!isBarrier(op.id)) counts[op.state]++;
  return counts;
}
