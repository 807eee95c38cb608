import { windowStatus } from './maintenance-windows';
import { failedAncestors, type Operation, type ScheduleState } from './operations';
import { needsApproval, waveSize, type SchedulingPolicy } from './policy';

/** What the site says about a node now. Absent fields (and absent nodes) take the inventory defaults: alive, available. */
export interface NodeObservation {
  alive?: boolean;
  available?: boolean;
  rack?: string;
  /** The node's lock went to another session: no op of ours may touch it any more. */
  lockLost?: boolean;
  /** The site shows the node claimed by a run of another control plane: left alone while it does. */
  claimedElsewhere?: boolean;
  /** Another run of this control plane holds the node's lock: its ops wait (not left alone) until it is free. */
  heldBy?: string;
  /**
   * Seconds left on the node's running job at the most: 0 when idle; undefined when unknown;
   * Infinity when it has no end. Slurm reports a job's end as the end of its time limit, and jobs
   * end before it, so this is an upper bound. Idle-first orders by it.
   */
  remainingJobSeconds?: number;
  /**
   * Seconds the node's running job surely still runs (a lower bound; absent: it may end at any
   * moment). A node is drained ahead of its slot only when this outlasts the next decision, so that
   * it is never drained and idle without a slot. Slurm tells no such bound.
   */
  minRemainingJobSeconds?: number;
}

export interface Observations {
  nodes: Readonly<Record<string, NodeObservation>>;
  /** Nodes outside the plan that went DOWN or FAIL since the run started. */
  outsideFailures?: readonly string[];
}

export type GateReason = 'node-not-alive' | 'node-unavailable' | 'node-lock-lost' | 'held-by-another-control-plane';

export type WaitReason =
  | { kind: 'approval'; wave: number }
  | { kind: 'bake'; until: number }
  | { kind: 'maintenance-window'; until: number | undefined }
  | { kind: 'paused' }
  | { kind: 'halted' };

/** What to do now. Apply it with `applyDecision`, then act on the site. */
export interface Decision {
  /** TODO -> TRANSITION. `holdsSlot: false`: started ahead (drain only; do not take the node out of service yet). */
  start: { op: string; holdsSlot: boolean }[];
  /** Ops started ahead that take a slot now: the node may go out of service. */
  admit: string[];
  /** Ops started ahead that go back to TODO (halted, paused, outside a window, node gated): undo their drain. */
  release: { op: string; reason: string }[];
  /** TODO ops left alone now because their node is not alive or not available (OpenCrowbar: not failed). */
  gated: { op: string; reason: GateReason }[];
  /** TODO ops that wait for their node's lock, which another run holds: the run does not finish while any waits. */
  lockWaits?: { op: string; holder: string }[];
  /** Set when the run halts now (failure budget, outside failures): no new op starts from now on. */
  halt?: { reason: string };
  /** Why startable ops are not starting; undefined when nothing holds them back but caps. */
  wait?: WaitReason;
  /** The wave under way after this decision. */
  wave: number;
  /** Nothing in TRANSITION and nothing will ever start: the run is over. */
  finished: boolean;
  /** Finished only: ops that end without having run, and why. */
  leftAlone: { op: string; reason: string }[];
  /** Finished only: ops that end BLOCKED behind failed ones. */
  blocked: { op: string; blockedBy: string[] }[];
  /** Finished only, with a view: why every TODO op outside the view ends without having run. */
  leftAloneOutside?: string;
  /** When this decision may change with no outcome or observation changing (bake ends, a window opens or closes). */
  recheckAt?: number;
  /**
   * The wave (0-based) that waits for an operator's approval not given yet: its predecessor is over and
   * ops are left to start. Set whatever else holds the run back (a pause, a closed window), so that
   * an operator can approve it while the run is paused.
   */
  approvalDue?: number;
}

/**
 * The start gate of one node (OpenCrowbar): why no op may start on it now, or undefined when it may
 * (the node is alive and available, its lock ours, no other control plane claims it).
 */
export function nodeGate(seen: NodeObservation | undefined): GateReason | undefined {
  if (seen?.lockLost === true) return 'node-lock-lost';
  if (seen?.claimedElsewhere === true) return 'held-by-another-control-plane';
  if (seen?.alive === false) return 'node-not-alive';
  if (seen?.available === false) return 'node-unavailable';
  return undefined;
}

function gateOf(observations: Observations, node: string): GateReason | undefined {
  return nodeGate(observations.nodes[node]);
}

/** How many of `nodes` each rack holds (nodes of no known rack are not counted): what the rack cap counts. */
export function countPerRack(nodes: Iterable<string>, rackOf: (node: string) => string | undefined): Map<string, number> {
  const perRack = new Map<string, number>();
  for (const node of nodes) {
    const rack = rackOf(node);
    if (rack !== undefined) perRack.set(rack, (perRack.get(rack) ?? 0) + 1);
  }
  return perRack;
}

/** The rack cap (policy.maxPerRack): whether `rack`, its slots counted in `perRack`, has room for one more. A node of no known rack always has. */
export function rackHasRoom(policy: Pick<SchedulingPolicy, 'maxPerRack'>, perRack: ReadonlyMap<string, number>, rack: string | undefined): boolean {
  return policy.maxPerRack === undefined || rack === undefined || (perRack.get(rack) ?? 0) < policy.maxPerRack;
}

/**
 * Whether an op could start on this node now, as far as the node goes: no start gate (nodeGate) and
 * room in its rack (rackHasRoom). The pass's other caps (overall, per group, waves) are not asked.
 */
export function nodeCouldStart(policy: Pick<SchedulingPolicy, 'maxPerRack'>, seen: NodeObservation | undefined, perRack: ReadonlyMap<string, number>): boolean {
  return nodeGate(seen) === undefined && rackHasRoom(policy, perRack, seen?.rack);
}

function failedNodeCount(ops: readonly Operation[]): number {
  return new Set(ops.filter((op) => op.state === 'ERROR').map((op) => op.node)).size;
}

function haltReason(state: ScheduleState, policy: SchedulingPolicy, observations: Observations): string | undefined {
  const failed = failedNodeCount(state.ops) + (state.outside?.failedNodes ?? 0);
  if (policy.maxFailedNodes !== undefined && failed > policy.maxFailedNodes) {
    return `${failed} failed nodes exceed maxFailed (${policy.maxFailedNodes})`;
  }
  const outside = observations.outsideFailures ?? [];
  if (policy.haltOnOutsideFailures && outside.length > 0) {
    return `nodes outside the plan went DOWN or FAIL: ${outside.slice(0, 10).join(', ')}${outside.length > 10 ? ` and ${outside.length - 10} more` : ''}`;
  }
  return undefined;
}

/** Counts slot holders overall, per rack and per group, as ops are started. */
class SlotCounter {
  holders = 0;
  private readonly perRack = new Map<string, number>();
  private readonly perGroup = new Map<string, number>();

  constructor(
    private readonly policy: SchedulingPolicy,
    private readonly rackOf: (node: string) => string | undefined,
  ) {}

  fits(op: Operation): boolean {
    if (this.holders >= this.policy.maxInTransition) return false;
    if (!rackHasRoom(this.policy, this.perRack, this.rackOf(op.node))) return false;
    const limit = op.group === undefined ? undefined : this.policy.groupLimits?.[op.group];
    return limit === undefined || (this.perGroup.get(op.group!) ?? 0) < limit;
  }

  take(op: Operation): void {
    this.holders++;
    const rack = this.rackOf(op.node);
    if (rack !== undefined) this.perRack.set(rack, (this.perRack.get(rack) ?? 0) + 1);
    if (op.group !== undefined) this.perGroup.set(op.group, (this.perGroup.get(op.group) ?? 0) + 1);
  }
}

/**
 * The annealer's pass, pure: which ops start now under every cap, gate, budget and barrier of
 * `policy`, given the site as `observations` saw it at `now` (epoch ms).
 *
 * Gates (OpenCrowbar): an op starts only on a node that is alive and available and has no op in
 * TRANSITION. Caps count slot holders: the global cap, per rack, per group. Waves: wave k admits at
 * most `waveSize(k)` ops; wave k+1 opens when no op of wave k is in TRANSITION and none can still join
 * it, after `bakeSeconds` and any approval. Halting, pausing and a closed maintenance window stop new
 * starts and admissions; ops in TRANSITION that hold a slot always run to their end.
 */
export function schedule(state: ScheduleState, policy: SchedulingPolicy, now: number, observations: Observations): Decision {
  const decision: Decision = { start: [], admit: [], release: [], gated: [], wave: state.wave, finished: false, leftAlone: [], blocked: [] };
  const rankOrder = (a: Operation, b: Operation) => a.rank - b.rank;
  const remaining = (op: Operation) => observations.nodes[op.node]?.remainingJobSeconds;
  const surely = (op: Operation) => observations.nodes[op.node]?.minRemainingJobSeconds;
  const sortKey = (op: Operation) => remaining(op) ?? Number.MAX_VALUE;
  const byOrder = policy.order === 'idle-first' ? (a: Operation, b: Operation) => sortKey(a) - sortKey(b) || rankOrder(a, b) : rankOrder;

  const halted = state.halted?.reason ?? haltReason(state, policy, observations);
  if (halted !== undefined && state.halted === undefined) decision.halt = { reason: halted };

  const window = policy.maintenanceWindows.length > 0 ? windowStatus(policy.maintenanceWindows, now) : undefined;
  if (window) decision.recheckAt = window.open ? window.closesAt : window.opensAt;
  const stopped: WaitReason | undefined =
    halted !== undefined
      ? { kind: 'halted' }
      : state.paused
        ? { kind: 'paused' }
        : window && !window.open
          ? { kind: 'maintenance-window', until: window.opensAt }
          : undefined;

  // Nodes with an op in TRANSITION (one transition per node) and the slot holders.
  const busyNodes = new Set<string>();
  const slots = new SlotCounter(policy, (node) => observations.nodes[node]?.rack);
  const startedAhead: Operation[] = [];
  for (const op of state.ops) {
    if (op.state !== 'TRANSITION') continue;
    busyNodes.add(op.node);
    if (op.holdsSlot) slots.take(op);
    else startedAhead.push(op);
  }

  // Ops started ahead go back to TODO when nothing may start, or when their node is gated.
  const keptAhead: Operation[] = [];
  for (const op of startedAhead) {
    const gate = gateOf(observations, op.node);
    if (stopped || gate) decision.release.push({ op: op.id, reason: gate ?? stopped!.kind });
    else keptAhead.push(op);
  }

  const candidates: Operation[] = [];
  const lockWaits: { op: string; holder: string }[] = [];
  for (const op of state.ops) {
    if (op.state !== 'TODO' || busyNodes.has(op.node)) continue;
    const gate = gateOf(observations, op.node);
    const holder = observations.nodes[op.node]?.heldBy;
    if (gate) decision.gated.push({ op: op.id, reason: gate });
    else if (holder !== undefined) lockWaits.push({ op: op.id, holder });
    else candidates.push(op);
  }
  if (lockWaits.length > 0) decision.lockWaits = lockWaits;
  // Released ops are candidates again only in a later pass (this one releases them because nothing may start).

  const inFlightAfter = () => busyNodes.size - decision.release.length + decision.start.length;

  const due = approvalDue(state, policy, candidates.length + keptAhead.length);
  if (due !== undefined) decision.approvalDue = due;

  if (stopped) {
    decision.wait = stopped;
  } else if (candidates.length > 0 || keptAhead.length > 0) {
    startInWave({ state, policy, now, candidates, keptAhead, slots, byOrder, surely }, decision);
  }

  recheckForAhead(state, policy, decision, now, surely);

  if (
    inFlightAfter() === 0 &&
    decision.start.length === 0 &&
    (halted !== undefined || (candidates.length === 0 && lockWaits.length === 0 && !state.outside?.todo))
  ) {
    finish(state, decision, halted);
  }
  return decision;
}

/** What schedule() has found when it comes to starting ops: the pass's inputs and the ops that may start. */
interface WaveStartInput {
  state: ScheduleState;
  policy: SchedulingPolicy;
  now: number;
  /** TODO ops on a free, ungated, unlocked node. */
  candidates: Operation[];
  /** Ops started ahead (no slot) that stay in TRANSITION this pass. */
  keptAhead: Operation[];
  /** The slots held by ops in TRANSITION; startInWave takes more. */
  slots: SlotCounter;
  /** The policy's start order. */
  byOrder: (a: Operation, b: Operation) => number;
  /** Seconds the op's node's job surely still runs, if known. */
  surely: (op: Operation) => number | undefined;
}

/** Opens the next wave when it may, then starts (or admits) ops into the wave, and drains ahead: into `decision`. */
function startInWave(input: WaveStartInput, decision: Decision): void {
  const { state, policy, now, candidates, keptAhead, slots, byOrder, surely } = input;
  let wave = state.wave;
  const waveOps = wave < 0 ? [] : state.ops.filter((op) => op.wave === wave);
  const waveInFlight = waveOps.some((op) => op.state === 'TRANSITION');
  let quota = wave < 0 ? 0 : waveSize(policy, wave) - waveOps.length - (state.outside?.waveEnded ?? 0);
  const waveOver = wave < 0 || (policy.admission === 'together' ? !waveInFlight : !waveInFlight && (quota <= 0 || candidates.length === 0));

  if (waveOver) {
    if (candidates.length === 0) return;
    if (wave >= 0 && policy.bakeSeconds > 0) {
      const lastEnd = Math.max(...waveOps.map((op) => op.endedAt ?? -Infinity), state.outside?.waveLastEndedAt ?? -Infinity);
      const until = lastEnd + policy.bakeSeconds * 1000;
      if (Number.isFinite(lastEnd) && now < until) {
        decision.wait = { kind: 'bake', until };
        decision.recheckAt = Math.min(decision.recheckAt ?? Infinity, until);
        return;
      }
    }
    if (needsApproval(policy, wave + 1) && !state.approvedWaves.includes(wave + 1)) {
      decision.wait = { kind: 'approval', wave: wave + 1 };
      return;
    }
    wave += 1;
    quota = waveSize(policy, wave);
    decision.wave = wave;
  } else if (policy.admission === 'together') {
    return;
  }

  // Slots first. Ops started ahead whose job may end before the next decision come first: each takes
  // a slot now or goes back to service (drained and idle without a slot, it would be over the cap).
  // Then the other ops started ahead and fresh candidates compete in the policy's order.
  const aheadIds = new Set(keptAhead.map((op) => op.id));
  // Due: the job may end before the next decision (only a job known to run longer is not).
  const due = (op: Operation) => !((surely(op) ?? 0) > policy.aheadHorizonSeconds);
  const dueAhead = keptAhead.filter(due).sort(byOrder);
  let givenBack = 0;
  for (const op of dueAhead) {
    if (slots.fits(op)) {
      slots.take(op);
      decision.admit.push(op.id);
    } else {
      decision.release.push({ op: op.id, reason: 'no-free-slot' });
      givenBack++;
    }
  }
  const contenders = [...keptAhead.filter((op) => !due(op)), ...candidates].sort(byOrder);
  const startedNow = new Set<string>();
  const nodesStarted = new Set<string>();
  for (const op of contenders) {
    if (slots.holders >= policy.maxInTransition) break;
    if (!aheadIds.has(op.id) && (quota <= 0 || nodesStarted.has(op.node))) continue;
    if (!slots.fits(op)) continue;
    slots.take(op);
    if (aheadIds.has(op.id)) {
      decision.admit.push(op.id);
    } else {
      decision.start.push({ op: op.id, holdsSlot: true });
      startedNow.add(op.id);
      nodesStarted.add(op.node);
      quota--;
    }
  }
  if (policy.admission === 'together' || policy.drainAhead === 0) return;

  // Then drain ahead: busy nodes next in order, within the wave, up to drainAhead without a slot,
  // none whose drain ahead was lifted before (so no node is drained more than twice). Only a node
  // whose job surely outlasts the next decision: an idle one, or one whose job may end before we
  // look again, would be out of service without a slot.
  let room = policy.drainAhead - (keptAhead.length - decision.admit.length - givenBack);
  for (const op of candidates.sort(byOrder)) {
    if (room <= 0 || quota <= 0) break;
    if (startedNow.has(op.id) || nodesStarted.has(op.node) || op.releasedAhead || due(op)) continue;
    decision.start.push({ op: op.id, holdsSlot: false });
    nodesStarted.add(op.node);
    room--;
    quota--;
  }
}

/** The next wave when it needs an approval not given yet and the wave under way is over (see startInWave). */
function approvalDue(state: ScheduleState, policy: SchedulingPolicy, startable: number): number | undefined {
  const next = state.wave + 1;
  if (state.halted || startable === 0 || !needsApproval(policy, next) || state.approvedWaves.includes(next)) return undefined;
  const waveOps = state.ops.filter((op) => op.wave === state.wave);
  if (waveOps.some((op) => op.state === 'TRANSITION')) return undefined;
  const over = policy.admission === 'together' || waveSize(policy, state.wave) - waveOps.length - (state.outside?.waveEnded ?? 0) <= 0;
  return over ? next : undefined;
}

/** The next decision must come before the job of any op started ahead may end (minus the horizon). */
function recheckForAhead(state: ScheduleState, policy: SchedulingPolicy, decision: Decision, now: number, surely: (op: Operation) => number | undefined): void {
  const starting = new Set(decision.start.filter((s) => !s.holdsSlot).map((s) => s.op));
  const admitted = new Set([...decision.admit, ...decision.release.map((r) => r.op)]);
  for (const op of state.ops) {
    const ahead = (op.state === 'TRANSITION' && !op.holdsSlot && !admitted.has(op.id)) || starting.has(op.id);
    const left = surely(op);
    if (!ahead || left === undefined || !Number.isFinite(left)) continue;
    const at = now + Math.max(0, left - policy.aheadHorizonSeconds) * 1000;
    decision.recheckAt = Math.min(decision.recheckAt ?? Infinity, at);
  }
}

function finish(state: ScheduleState, decision: Decision, halted: string | undefined): void {
  decision.finished = true;
  const gated = new Map(decision.gated.map((g) => [g.op, g.reason as string]));
  for (const { op, reason } of decision.release) gated.set(op, reason);
  for (const op of state.ops) {
    if (op.state === 'ACTIVE' || op.state === 'ERROR') continue;
    if (op.state === 'BLOCKED') {
      const blockedBy = failedAncestors(state, op.id);
      if (blockedBy.length > 0) {
        decision.blocked.push({ op: op.id, blockedBy });
        continue;
      }
    }
    const reason = halted !== undefined ? `halted: ${halted}` : (gated.get(op.id) ?? (op.state === 'BLOCKED' ? 'waiting for ops left alone' : 'not started'));
    decision.leftAlone.push({ op: op.id, reason });
  }
  if (state.outside?.todo) decision.leftAloneOutside = halted !== undefined ? `halted: ${halted}` : 'not started';
}

/** Records a decision in the state. The caller then acts on the site (drain, boot, ...) for `start` and `admit`. */
export function applyDecision(state: ScheduleState, decision: Decision, now: number): ScheduleState {
  const starts = new Map(decision.start.map((s) => [s.op, s.holdsSlot]));
  const admits = new Set(decision.admit);
  const releases = new Set(decision.release.map((r) => r.op));
  const leftAlone = new Map(decision.leftAlone.map((l) => [l.op, l.reason]));
  const blocked = new Map(decision.blocked.map((b) => [b.op, b.blockedBy]));
  const ops = state.ops.map((op): Operation => {
    const holdsSlot = starts.get(op.id);
    if (holdsSlot !== undefined) {
      return { ...op, state: 'TRANSITION', holdsSlot, wave: decision.wave, startedAt: now, ...(holdsSlot ? { admittedAt: now } : {}) };
    }
    if (admits.has(op.id)) return { ...op, holdsSlot: true, admittedAt: now };
    if (releases.has(op.id)) {
      const { holdsSlot: _h, wave: _w, startedAt: _s, ...rest } = op;
      const reason = leftAlone.get(op.id);
      return { ...rest, state: 'TODO', releasedAhead: true, ...(reason === undefined ? {} : { leftAlone: reason }) };
    }
    if (leftAlone.has(op.id)) return { ...op, leftAlone: leftAlone.get(op.id)! };
    if (blocked.has(op.id)) return { ...op, blockedBy: blocked.get(op.id)! };
    return op;
  });
  return {
    ...state,
    ops,
    wave: decision.wave,
    ...(decision.halt ? { halted: { reason: decision.halt.reason, at: now } } : {}),
    ...(decision.finished ? { finishedAt: now } : {}),
  };
}
