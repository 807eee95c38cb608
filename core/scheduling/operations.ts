import { InvalidInputError, UnexpectedOutcomeError, type FieldProblem } from '../errors';
import { stronglyConnectedComponents } from '../graph/graph-algorithms';

/**
 * OpenCrowbar's noderole states. PROPOSED until committed; then TODO (every parent ACTIVE) or
 * BLOCKED (some parent not ACTIVE); TRANSITION while the work runs; ACTIVE or ERROR when it ends.
 */
export type OperationState = 'PROPOSED' | 'TODO' | 'BLOCKED' | 'TRANSITION' | 'ACTIVE' | 'ERROR';

/** One piece of work on one node: a rolling upgrade has one `upgrade` op per node, a task graph one per node-task. */
export interface OperationSpec {
  /** Unique within the schedule, e.g. `x1000c0s0b0n0/upgrade`. */
  id: string;
  node: string;
  /** Ops that must be ACTIVE before this one may start (the noderole graph's parents). */
  requires?: readonly string[];
  /** Group whose cap applies (issue 10: a Fuel role group with strategy one_by_one or parallel amount N). */
  group?: string;
}

export interface Operation {
  id: string;
  node: string;
  group?: string;
  requires: string[];
  /** Position in the plan (the specs' order): plan order, and the tie-break of every other order. */
  rank: number;
  state: OperationState;
  /**
   * TRANSITION only: whether the op holds one of the window's slots. False while a node drained
   * ahead still runs its job (it is not out of service yet); true once admitted.
   */
  holdsSlot?: boolean;
  /** The wave (batch, lock-step step) the op started in. */
  wave?: number;
  startedAt?: number;
  /**
   * TODO only: this node was drained ahead once and its drain lifted (no free slot when its job
   * ended, or the run stopped). It is drained again only with a slot, never ahead: at most two drains.
   */
  releasedAhead?: boolean;
  /** When the op took its slot (== startedAt unless it was drained ahead). */
  admittedAt?: number;
  endedAt?: number;
  /** ERROR: what went wrong (e.g. `upgrading-boot-session-failed`). */
  error?: string;
  /** Set when the run finished without doing this op: why it was left alone. */
  leftAlone?: string;
  /** Set when the run finished with this op BLOCKED behind failed ones: those ERROR ops. */
  blockedBy?: string[];
}

/**
 * What a view of the schedule leaves out, in aggregate: a caller at fleet scale hands the scheduler
 * only the ops in TRANSITION and the candidates it looked at, and sums up the rest here.
 */
export interface OutsideTheView {
  /** Nodes with an op in ERROR outside the view (the failure budget counts them). */
  failedNodes: number;
  /** Ops of the current wave that ended (ACTIVE or ERROR) outside the view, and the last end (the wave's quota and bake). */
  waveEnded: number;
  waveLastEndedAt?: number;
  /** TODO ops outside the view: while there are any, the run is not finished (unless halted). */
  todo: number;
}

/** Everything the scheduler knows between calls: plain JSON, so a workflow can store it. */
export interface ScheduleState {
  /** In rank (plan) order. */
  ops: Operation[];
  /** Absent: `ops` is the whole schedule. */
  outside?: OutsideTheView;
  /** Index of the wave under way; -1 before the first start. */
  wave: number;
  /** Waves an operator approved to start (0-based wave index). */
  approvedWaves: number[];
  paused: boolean;
  halted?: { reason: string; at: number };
  finishedAt?: number;
}

export type TerminalStatus = 'ACTIVE' | 'ERROR' | 'BLOCKED' | 'LEFT_ALONE';

/** Builds the proposal: every op PROPOSED. Rejects duplicate ids, unknown requirements and cycles. */
export function proposeSchedule(specs: readonly OperationSpec[]): ScheduleState {
  const problems: FieldProblem[] = [];
  const ids = new Set<string>();
  specs.forEach((spec, i) => {
    if (ids.has(spec.id)) problems.push({ field: `operations[${i}].id`, message: `duplicate operation id '${spec.id}'` });
    ids.add(spec.id);
  });
  specs.forEach((spec, i) =>
    (spec.requires ?? []).forEach((parent, k) => {
      if (!ids.has(parent)) problems.push({ field: `operations[${i}].requires[${k}]`, message: `unknown operation '${parent}'` });
      if (parent === spec.id) problems.push({ field: `operations[${i}].requires[${k}]`, message: 'an operation cannot require itself' });
    }),
  );
  if (problems.length === 0) {
    const parents = new Map(specs.map((s) => [s.id, [...(s.requires ?? [])]]));
    for (const component of stronglyConnectedComponents([...ids], (id) => parents.get(id) ?? [])) {
      if (component.length > 1) problems.push({ field: 'operations', message: `dependency cycle: ${component.join(' -> ')}` });
    }
  }
  if (problems.length > 0) throw new InvalidInputError('operations', problems);
  return {
    ops: specs.map((spec, rank) => ({
      id: spec.id,
      node: spec.node,
      ...(spec.group === undefined ? {} : { group: spec.group }),
      requires: [...(spec.requires ?? [])],
      rank,
      state: 'PROPOSED' as const,
    })),
    wave: -1,
    approvedWaves: [],
    paused: false,
  };
}

/** Commits the proposal (OpenCrowbar's deployment commit): PROPOSED -> TODO or BLOCKED. */
export function commitSchedule(state: ScheduleState): ScheduleState {
  return settleDependencies({ ...state, ops: state.ops.map((op) => (op.state === 'PROPOSED' ? { ...op, state: 'BLOCKED' as const } : op)) });
}

export type OperationOutcome = { ok: true } | { ok: false; error: string };

/** The work of a TRANSITION op ended. ACTIVE frees its children; ERROR keeps every descendant BLOCKED. */
export function recordOutcome(state: ScheduleState, opId: string, outcome: OperationOutcome, now: number): ScheduleState {
  return recordOutcomes(state, new Map([[opId, outcome]]), now);
}

/** Several ops ended at once (one look at the site): recorded together, the dependencies settled once (a pass over 10,000 nodes' outcomes stays linear). */
export function recordOutcomes(state: ScheduleState, outcomes: ReadonlyMap<string, OperationOutcome>, now: number): ScheduleState {
  if (outcomes.size === 0) return state;
  const seen = new Set<string>();
  const ops = state.ops.map((op) => {
    const outcome = outcomes.get(op.id);
    if (!outcome) return op;
    if (op.state !== 'TRANSITION') throw new UnexpectedOutcomeError(op.id, op.state);
    seen.add(op.id);
    const { holdsSlot: _slot, ...rest } = op;
    return outcome.ok ? { ...rest, state: 'ACTIVE' as const, endedAt: now } : { ...rest, state: 'ERROR' as const, endedAt: now, error: outcome.error };
  });
  const unknown = [...outcomes.keys()].find((id) => !seen.has(id));
  if (unknown !== undefined) throw new UnexpectedOutcomeError(unknown, undefined);
  return settleDependencies({ ...state, ops });
}

/** An operator approved wave `wave` (0-based) to start. */
export function approveWave(state: ScheduleState, wave: number): ScheduleState {
  return state.approvedWaves.includes(wave) ? state : { ...state, approvedWaves: [...state.approvedWaves, wave].sort((a, b) => a - b) };
}

export function setPaused(state: ScheduleState, paused: boolean): ScheduleState {
  return { ...state, paused };
}

/** BLOCKED <-> TODO by the parents' states (OpenCrowbar: TODO only when every parent is ACTIVE). */
function settleDependencies(state: ScheduleState): ScheduleState {
  const byId = new Map(state.ops.map((op) => [op.id, op]));
  let changed = false;
  const ops = state.ops.map((op) => {
    if (op.state !== 'BLOCKED' && op.state !== 'TODO') return op;
    const ready = op.requires.every((p) => byId.get(p)?.state === 'ACTIVE');
    const next = ready ? 'TODO' : 'BLOCKED';
    if (next === op.state) return op;
    changed = true;
    return { ...op, state: next as OperationState };
  });
  return changed ? { ...state, ops } : state;
}

/** The ERROR ops upstream of `opId` (empty when it is only waiting for parents still to run). */
export function failedAncestors(state: ScheduleState, opId: string): string[] {
  const byId = new Map(state.ops.map((op) => [op.id, op]));
  const failed = new Set<string>();
  const seen = new Set<string>();
  const stack = [...(byId.get(opId)?.requires ?? [])];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const op = byId.get(id);
    if (!op) continue;
    if (op.state === 'ERROR') failed.add(id);
    else stack.push(...op.requires);
  }
  return [...failed].sort();
}

/** The status an op ended with, once the run finished. */
export function terminalStatus(op: Operation): TerminalStatus | undefined {
  if (op.state === 'ACTIVE' || op.state === 'ERROR') return op.state;
  if (op.blockedBy !== undefined) return 'BLOCKED';
  if (op.leftAlone !== undefined) return 'LEFT_ALONE';
  return undefined;
}
