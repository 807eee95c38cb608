import {
  applyDecision,
  commitSchedule,
  proposeSchedule,
  recordOutcome,
  schedule,
  type Decision,
  type NodeObservation,
  type Observations,
  type Operation,
  type OperationOutcome,
  type ScheduleState,
  type WaitReason,
} from '../scheduling';
import type { BootSessionStatus, InventoryNode, WlmNode } from '../site/site-nodes';
import { shortList } from '../text';
import { formatWait } from '../time-format';
import type { EmptyBootSessionError } from '../errors';
import { drainClaim } from '../site/node-claims';
import { FailureReason, type NodePhase, type NodeRecord, type WindowOp, type WindowProgress } from './session';
import {
  emptyBootSession,
  enterStage,
  failInSite,
  names,
  needsOurDrain,
  releaseLocks,
  returnToService,
  type NodeAction,
  type SiteWait,
  type StageDecision,
  unrestoredReasons,
} from './stage-decision';
import { upgradeOperations, upgradeOpId, upgradeOpNode, upgradePolicy } from './upgrade-policy';
import { emptyMarks, hasPosition, Mark, withMarks, withPositions } from './plan-marks';
import { hasNoJob } from './wlm-readiness';
import { describeHealthFailures, startChecks, type HealthCheckResult } from './health-check';
import { healthCheckCommand } from './upgrade-request';
import type { Progress, UpgradeSession } from './session';
import { learnSlotSeconds } from './slot-plan';
import { advanceInFlight, decidePutBack, inFlightDeadline, type InFlightAdvance, type PutBack, type RecordsNow } from './window-in-flight';

/**
 * Mode window (stage ROLLING): one increment moves every node in flight through its own phases
 * (DRAINING -> QUIESCED -> BOOTING -> BOOTED [-> CHECKING] -> DONE, with lock-step's timeouts and
 * reasons) and lets the annealer (core/scheduling) refill the freed slots. It works on a view: the
 * records of the in-flight index (WindowProgress.inFlight) and the TODO nodes it looks at, with the
 * rest summed up on the session item (plan marks, counts, the wave's ends), so an increment reads
 * O(in flight) records at any fleet size.
 */

export const initialWindowProgress = (nodeCount: number): WindowProgress => ({
  wave: -1,
  approvedWaves: [],
  paused: false,
  bootCount: 0,
  inFlight: [],
  marks: emptyMarks(nodeCount),
  waveEnded: 0,
});

/** Boot sessions of a window are numbered: a retried increment that saved the count never reuses a name. */
export function windowBootSessionName(upgradeId: string, count: number): string {
  return `rollout-${upgradeId}-boot-${count}`;
}

/** STARTING in mode window: the plan is taken, the failed group emptied; every node then moves in ROLLING. */
export function decideStartWindow(session: UpgradeSession, progress: Progress, failedMembers: readonly string[], now: number): StageDecision {
  const actions: NodeAction[] = failedMembers.length > 0 ? [{ type: 'removeFromGroup', label: session.failedLabel, nodes: [...failedMembers] }] : [];
  if (session.nodeCount === 0) {
    return { progress: enterStage('CLEANUP', 0, now), waitSeconds: 0, actions, message: 'No nodes left to upgrade' };
  }
  const policy = upgradePolicy(session, session.nodeCount);
  return {
    progress: enterStage('ROLLING', 0, now, { window: initialWindowProgress(session.nodeCount), counts: { upgraded: 0, failed: 0 } }),
    waitSeconds: 0,
    actions,
    message: `Window: ${session.nodeCount} node(s), at most ${policy.maxInTransition} out of service at once, ${policy.drainAhead} drained ahead, order ${policy.order}`,
  };
}

/** The window's progress with the operator's gate applied: paused as the operator says, and every batch they approved. */
export function gatedWindow(session: Pick<UpgradeSession, 'operator'>, window: WindowProgress): WindowProgress {
  const operator = session.operator;
  if (!operator) return window;
  const approved = [...new Set([...window.approvedWaves, ...(operator.approvedWaves ?? [])])].sort((a, b) => a - b);
  return { ...window, paused: operator.paused ?? window.paused, approvedWaves: approved };
}

/** What an increment looks at: the in-flight index's records, sorted out, and the TODO nodes it may start. */
export interface WindowView {
  /** Records of the index whose op is in TRANSITION. */
  inFlight: readonly NodeRecord[];
  /** Index entries whose record left flight already (upgraded, failed, lock lost): a crash before the progress write; counted now. */
  settled: readonly NodeRecord[];
  /** Index entries with no record in flight: the intent was saved, then the increment died before recording (so before draining) it. */
  dropped: readonly NodeRecord[];
  /** TODO nodes looked at this increment, with their plan positions (their records need not be read: a start records them anew). */
  candidates: readonly NodeRecord[];
  /** TODO positions not looked at this increment. */
  todoOutside: number;
}

/** Sorts the records of the in-flight index into those in flight, those that left it, and bare intents. */
export function sortInFlight(records: readonly NodeRecord[]): Pick<WindowView, 'inFlight' | 'settled' | 'dropped'> {
  const inFlight: NodeRecord[] = [];
  const settled: NodeRecord[] = [];
  const dropped: NodeRecord[] = [];
  for (const record of records) {
    if (record.status === 'UPGRADED' || record.status === 'FAILED' || record.phase === 'LOCK_LOST') settled.push(record);
    else if (record.status === 'IN_PROGRESS' && record.op?.state === 'TRANSITION') inFlight.push(record);
    else dropped.push(record);
  }
  return { inFlight, settled, dropped };
}

/** The scheduler's view: the in-flight ops and the candidates (rank = plan position), the rest summed up. */
export function windowScheduleState(view: WindowView, window: WindowProgress, counts: Progress['counts']): ScheduleState {
  const records = [...view.inFlight, ...view.candidates].sort((a, b) => a.index - b.index);
  const committed = commitSchedule(proposeSchedule(upgradeOperations(names(records))));
  const ops = committed.ops.map((op, i) => {
    const record = records[i]!;
    // A TODO node whose drain ahead was lifted before is never drained ahead again.
    const released = !record.op && hasPosition(window.releasedAhead, record.index) ? { releasedAhead: true } : {};
    return { ...op, rank: record.index, ...released, ...(record.op ?? {}) };
  });
  const {
    bootCount: _count,
    outsideDownAtStart: _outside,
    inFlight: _index,
    marks: _marks,
    waveEnded,
    waveLastEndedAt,
    draining: _draining,
    releasedAhead: _released,
    ...rest
  } = window;
  const settledFailed = view.settled.filter((r) => r.status === 'FAILED').length;
  return {
    ...rest,
    ops,
    outside: {
      failedNodes: (counts?.failed ?? 0) + settledFailed,
      waveEnded: waveEnded ?? 0,
      ...(waveLastEndedAt !== undefined ? { waveLastEndedAt } : {}),
      todo: view.todoOutside,
    },
  };
}

export interface WindowObserved {
  /** The workload manager's view of every node not yet done. */
  wlm: ReadonlyMap<string, WlmNode>;
  /** The inventory (alive, available, rack). */
  inventory: ReadonlyMap<string, InventoryNode>;
  /** Boot sessions of the nodes in BOOTING, by name; undefined when the boot service does not know one. */
  boots: ReadonlyMap<string, BootSessionStatus | undefined>;
  /** When the running jobs of busy nodes end (epoch ms), where the workload manager tells (idle-first, drain-ahead). */
  jobEnds?: ReadonlyMap<string, number>;
  /** haltOnOutsideFailures: the workload manager's view of the inventory's nodes outside the plan. */
  outside?: ReadonlyMap<string, WlmNode>;
  /** The health check commands of the nodes in phase CHECKING. */
  checks?: ReadonlyMap<string, HealthCheckResult>;
  /** Candidates the site shows claimed by a run of another control plane (core/site/node-claims.ts), with that run: left alone while it does. */
  claimedElsewhere?: ReadonlyMap<string, string>;
}

/** DOWN or FAIL in Slurm: what haltOnOutsideFailures watches outside the plan. */
function isDownOrFailed(node: WlmNode): boolean {
  return node.base === 'DOWN' || node.flags.includes('FAIL');
}

/** Nodes outside the plan DOWN or FAIL now, by name (sorted). */
export function outsideDown(outside: ReadonlyMap<string, WlmNode> | undefined): string[] {
  return outside === undefined
    ? []
    : [...outside.values()]
        .filter(isDownOrFailed)
        .map((n) => n.name)
        .sort();
}

/**
 * What the scheduler sees of the nodes in the view. An idle node has 0 s left; a busy one at most
 * what its jobs have left when the workload manager tells their end (else unknown: idle-first takes
 * idle nodes first, then plan order). Slurm's end_time is the end of the job's time limit and jobs
 * end before it, so it is an upper bound only: no lower bound is given, and no node is drained
 * ahead of its slot (its job may end at any moment, leaving it idle and drained without a slot).
 * A node the workload manager does not know is not alive: left alone, never drained.
 */
export function windowObservations(records: readonly NodeRecord[], observed: WindowObserved, now: number, window: WindowProgress): Observations {
  const nodes: Record<string, NodeObservation> = {};
  for (const record of records) nodes[record.name] = windowNodeObservation(record.name, observed, now);
  // Only nodes that went DOWN or FAIL since the first increment count (those already down then do not).
  const before = new Set(window.outsideDownAtStart ?? outsideDown(observed.outside));
  return { nodes, outsideFailures: outsideDown(observed.outside).filter((name) => !before.has(name)) };
}

/** What the scheduler sees of one node (windowObservations). */
function windowNodeObservation(name: string, observed: WindowObserved, now: number): NodeObservation {
  return { ...windowNodeGates(name, observed), ...remainingJob(name, observed.wlm.get(name), observed.jobEnds, now) };
}

/** What the scheduler's start gate and rack cap read of one node (core/scheduling nodeCouldStart): alive, available, claimed, its rack. */
export function windowNodeGates(name: string, observed: Pick<WindowObserved, 'wlm' | 'inventory' | 'claimedElsewhere'>): NodeObservation {
  const inv = observed.inventory.get(name);
  return {
    alive: observed.wlm.get(name) !== undefined && inv?.alive !== false,
    available: inv?.available !== false,
    ...(observed.claimedElsewhere?.has(name) ? { claimedElsewhere: true } : {}),
    ...(inv?.rack !== undefined ? { rack: inv.rack } : {}),
  };
}

function remainingJob(name: string, wlm: WlmNode | undefined, jobEnds: ReadonlyMap<string, number> | undefined, now: number): { remainingJobSeconds?: number } {
  if (wlm === undefined) return {};
  if (hasNoJob(wlm)) return { remainingJobSeconds: 0 };
  const end = jobEnds?.get(name);
  return end === undefined ? {} : { remainingJobSeconds: Math.max(0, (end - now) / 1000) };
}

/** What an increment derives once from its progress and view, for the scheduler's pass and the decision after it. */
export interface WindowSchedule {
  /** The window as the increment found it, with the operator's gate applied (gatedWindow). */
  window: WindowProgress;
  /** The scheduler's view of it, before this increment's decision (windowScheduleState). */
  state: ScheduleState;
}

/** The increment's window and schedule state. A candidate's lock token does not change them: derived before the locks are taken, they hold after. */
export function windowSchedule(session: UpgradeSession, progress: Progress, view: WindowView): WindowSchedule {
  const window = gatedWindow(session, progress.window ?? initialWindowProgress(session.nodeCount));
  return { window, state: windowScheduleState(view, window, progress.counts) };
}

export interface WindowInput {
  session: UpgradeSession;
  progress: Progress;
  view: WindowView;
  observed: WindowObserved;
  now: number;
  /** The increment's window and schedule state (windowSchedule), derived once and passed from phase to phase; derived here when absent. */
  schedule?: WindowSchedule;
}

/** The annealer's pass for this increment (nothing starts once the session is being deleted). */
export function scheduleWindow({ session, progress, view, observed, now, schedule: derived }: WindowInput): Decision {
  const { window, state } = derived ?? windowSchedule(session, progress, view);
  const decision = schedule(
    state,
    upgradePolicy(session, session.nodeCount),
    now,
    windowObservations([...view.inFlight, ...view.candidates], observed, now, window),
  );
  if (session.state === 'STOPPING') {
    // Stopping: start nothing and open no wave; the run finishes by the scheduler only if nothing was left to start (or it halted).
    return { ...decision, start: [], admit: [], wave: window.wave, ...(decision.finished ? {} : { leftAlone: [], blocked: [] }) };
  }
  if (session.state !== 'DELETING') return decision;
  // Deleting: start nothing, and no run "finishes" by the scheduler: the delete sequence takes over.
  return { ...decision, start: [], admit: [], finished: false, leftAlone: [], blocked: [] };
}

/** A record with its op as the schedule has it now; an op that never started, or was put back, is not stored. */
export function withStoredOp(record: NodeRecord, op: Operation | undefined): NodeRecord {
  const { op: _old, ...rest } = record;
  if (op === undefined || (op.state !== 'TRANSITION' && op.state !== 'ACTIVE' && op.state !== 'ERROR')) return rest;
  const { state, holdsSlot, wave, startedAt, admittedAt, endedAt } = op;
  const stored: WindowOp = {
    state,
    ...(holdsSlot !== undefined ? { holdsSlot } : {}),
    ...(wave !== undefined ? { wave } : {}),
    ...(startedAt !== undefined ? { startedAt } : {}),
    ...(admittedAt !== undefined ? { admittedAt } : {}),
    ...(endedAt !== undefined ? { endedAt } : {}),
  };
  return { ...rest, op: stored };
}

export interface StartsInput {
  session: Pick<UpgradeSession, 'upgradeId'>;
  /** Nodes the decision starts, and nodes drained ahead it admits to a slot; their ops as applied. */
  start: readonly string[];
  admit: readonly string[];
  ops: ReadonlyMap<string, Operation>;
  records: RecordsNow;
  wlm: ReadonlyMap<string, WlmNode>;
}

export interface Starts {
  /** The started nodes recorded IN_PROGRESS, DRAINING, with their ops (the intent: written before any drain). */
  started: NodeRecord[];
  /** The started nodes to drain: a node already drained, by us or an admin, keeps its drain and reason. */
  drain: string[];
  /** The admitted nodes, recorded with their ops (now holding a slot). */
  admitted: NodeRecord[];
  message?: string;
}

/** Phase "start and admit": the nodes the scheduler starts enter flight DRAINING; those drained ahead it admits take their slot. */
export function decideStarts({ session, start, admit, ops, records, wlm }: StartsInput): Starts {
  return {
    started: start.map((name) => withStoredOp({ ...records.get(name)!, status: 'IN_PROGRESS', phase: 'DRAINING' }, ops.get(name))),
    drain: start.filter((name) => needsOurDrain(wlm.get(name), session.upgradeId)),
    admitted: admit.map((name) => withStoredOp(records.get(name)!, ops.get(name))),
    ...(start.length > 0 ? { message: `Window: draining ${start.length} node(s): ${shortList(start)}` } : {}),
  };
}

/** The failed nodes by reason, in the order the reasons first came. */
export function failuresByReason(outcomes: readonly [string, OperationOutcome][]): Map<string, string[]> {
  const failures = new Map<string, string[]>();
  for (const [name, outcome] of outcomes) if (!outcome.ok) failures.set(outcome.error, [...(failures.get(outcome.error) ?? []), name]);
  return failures;
}

export interface EndedInput {
  /** The schedule's ops with this increment's outcomes recorded. */
  ops: readonly Operation[];
  /** Nodes whose lock is given back in this increment: those among them whose op ended are recorded done. */
  released: readonly string[];
  records: RecordsNow;
  failures: ReadonlyMap<string, readonly string[]>;
  unhealthy: readonly { name: string; detail: string }[];
}

/** Phase "settle ended": the nodes whose op ended are recorded DONE, UPGRADED or FAILED with the reason, lock token dropped. */
export function settleEnded({ ops, released, records, failures, unhealthy }: EndedInput): { ended: NodeRecord[]; messages: string[] } {
  const releasedNow = new Set(released);
  const ended: NodeRecord[] = [];
  for (const op of ops) {
    if (!releasedNow.has(op.node) || (op.state !== 'ACTIVE' && op.state !== 'ERROR')) continue;
    const { lockToken: _token, ...record } = records.get(op.node)!;
    ended.push(
      withStoredOp({ ...record, status: op.state === 'ACTIVE' ? 'UPGRADED' : 'FAILED', phase: 'DONE', ...(op.error ? { reason: op.error } : {}) }, op),
    );
  }
  const upgraded = ended.filter((r) => r.status === 'UPGRADED').map((r) => r.name);
  const messages = upgraded.length > 0 ? [`Window: ${upgraded.length} node(s) back in service: ${shortList(upgraded)}`] : [];
  for (const [reason, nodes] of failures) {
    messages.push(
      `Window: ${nodes.length} node(s) failed with ${reason}: ${reason === FailureReason.healthCheckFailed ? describeHealthFailures(unhealthy) : shortList(nodes)}`,
    );
  }
  return { ended, messages };
}

export interface BootsInput {
  session: Pick<UpgradeSession, 'upgradeId' | 'upgradeTemplateId'>;
  toBoot: readonly string[];
  restartBoots: ReadonlyMap<string, readonly string[]>;
  bootCount: number;
  records: RecordsNow;
  now: number;
}

/**
 * Phase "boot": the newly quiet nodes boot together, in one boot session (the next number) limited
 * to exactly them, recorded BOOTING first; a boot session the boot service lost, or whose start
 * failed, starts again, same name, its nodes recorded with the time it was asked again first (their
 * boot timeout counts from it; the request time stays, the bound a boot is judged after).
 */
export function decideBoots({ session, toBoot, restartBoots, bootCount, records, now }: BootsInput): {
  writes: NodeRecord[];
  actions: NodeAction[];
  bootCount: number;
  message?: string;
} {
  const restarts: NodeAction[] = [...restartBoots].map(([name, nodes]) => ({
    type: 'startBoot',
    name,
    template: session.upgradeTemplateId,
    limit: { nodes: [...nodes] },
  }));
  const retried = [...restartBoots.values()].flat().map((node): NodeRecord => {
    const record = records.get(node)!;
    return { ...record, boot: { ...record.boot!, retriedAt: now } };
  });
  if (toBoot.length === 0) return { writes: retried, actions: restarts, bootCount };
  const name = windowBootSessionName(session.upgradeId, bootCount);
  // Quiet now (drained, no job), and rebooted now: both phases stamped (the quiet one was never written on its own).
  const writes = toBoot.map((node): NodeRecord => {
    const record = records.get(node)!;
    return {
      ...record,
      phase: 'BOOTING',
      boot: { session: name, requestedAt: now },
      phaseTimes: { ...record.phaseTimes, QUIESCED: record.phaseTimes?.QUIESCED ?? now },
    };
  });
  return {
    writes: [...writes, ...retried],
    actions: [{ type: 'startBoot', name, template: session.upgradeTemplateId, limit: { nodes: [...toBoot] } }, ...restarts],
    bootCount: bootCount + 1,
    message: `Window: boot session ${name} started for ${toBoot.length} node(s) with template ${session.upgradeTemplateId}`,
  };
}

/** The slot length learned from the nodes upgraded in this increment (admitted to back in service). */
function slotLearned(previous: number | undefined, ended: readonly NodeRecord[], now: number): { slotSeconds?: number } {
  const held = ended.flatMap((r) => (r.status === 'UPGRADED' && r.op?.admittedAt !== undefined ? [(now - r.op.admittedAt) / 1000] : []));
  const learned = learnSlotSeconds(previous, held);
  return learned === undefined ? {} : { slotSeconds: Math.round(learned) };
}

const MARK_OF_STATUS: Partial<Record<NodeRecord['status'], Mark>> = { UPGRADED: Mark.upgraded, FAILED: Mark.failed };

export interface WindowAfterInput {
  session: Pick<UpgradeSession, 'nodeCount' | 'reserveSlots'>;
  /** The window as the increment found it (gated), and the schedule after it. */
  window: WindowProgress;
  state: ScheduleState;
  decision: Decision;
  counts: Progress['counts'];
  view: Pick<WindowView, 'settled' | 'dropped'>;
  /** Recorded done in this increment. */
  ended: readonly NodeRecord[];
  records: RecordsNow;
  bootCount: number;
  outside: WindowObserved['outside'];
  now: number;
}

/**
 * Phase "recount": the window after the increment. The in-flight index holds the ops in TRANSITION;
 * the nodes that left it (ended now, or settled by an increment whose progress write was lost) are
 * marked and counted in the same write; the wave's quota, bake and start counts; the live view.
 */
export function windowAfter({ session, window, state, decision, counts: before, view, ended, records, bootCount, outside, now }: WindowAfterInput): {
  window: WindowProgress;
  counts: NonNullable<Progress['counts']>;
} {
  const positionOf = new Map([...records.values(), ...view.settled, ...view.dropped].map((r) => [r.name, r.index]));
  const inFlight = state.ops.filter((op) => op.state === 'TRANSITION');
  const leaving = [...ended, ...view.settled];
  const marks = new Map<number, Mark>(leaving.map((r) => [r.index, r.phase === 'LOCK_LOST' ? Mark.gone : (MARK_OF_STATUS[r.status] ?? Mark.gone)]));
  const counted = (status: NodeRecord['status']) => leaving.filter((r) => r.status === status && r.phase !== 'LOCK_LOST').length;
  const counts = { upgraded: (before?.upgraded ?? 0) + counted('UPGRADED'), failed: (before?.failed ?? 0) + counted('FAILED') };
  const newWave = state.wave !== window.wave;
  // A settled entry ended in an increment whose progress write was lost: its wave counts it now.
  const endedInWave = leaving.filter((r) => r.phase !== 'LOCK_LOST' && r.op?.wave === state.wave).length;
  const phases: Partial<Record<NodePhase, number>> = {};
  for (const op of inFlight) {
    const phase = records.get(op.node)!.phase ?? 'DRAINING';
    phases[phase] = (phases[phase] ?? 0) + 1;
  }
  const next: WindowProgress = {
    wave: state.wave,
    approvedWaves: state.approvedWaves,
    paused: state.paused,
    ...(state.halted ? { halted: state.halted } : {}),
    ...(decision.wait ? { waiting: decision.wait.kind === 'approval' ? `approval of batch ${decision.wait.wave + 1}` : decision.wait.kind } : {}),
    // Kept while paused too: an operator may approve the batch before lifting the pause.
    ...(decision.approvalDue !== undefined ? { awaitingApproval: decision.approvalDue } : {}),
    bootCount,
    ...(window.outsideDownAtStart !== undefined || outside !== undefined ? { outsideDownAtStart: window.outsideDownAtStart ?? outsideDown(outside) } : {}),
    inFlight: inFlight.map((op) => positionOf.get(op.node)!),
    marks: withMarks(window.marks ?? emptyMarks(session.nodeCount), marks),
    waveEnded: (newWave ? 0 : (window.waveEnded ?? 0)) + endedInWave,
    // A batch's counts when it closes are the counts then less these (every node of the wave before has ended when a wave opens).
    ...(newWave ? { waveStartCounts: counts } : window.waveStartCounts ? { waveStartCounts: window.waveStartCounts } : {}),
    ...(endedInWave > 0 ? { waveLastEndedAt: now } : !newWave && window.waveLastEndedAt !== undefined ? { waveLastEndedAt: window.waveLastEndedAt } : {}),
    draining: phases.DRAINING ?? 0,
    // Drained ahead: in flight without a slot (not counted against maxUnavailable).
    ahead: inFlight.filter((op) => op.holdsSlot === false).length,
    phases,
    ...(session.reserveSlots ? slotLearned(window.slotSeconds, ended, now) : {}),
    ...(decision.release.length > 0 || window.releasedAhead !== undefined
      ? {
          releasedAhead: withPositions(
            window.releasedAhead,
            session.nodeCount,
            decision.release.map(({ op }) => records.get(upgradeOpNode(op))!.index),
          ),
        }
      : {}),
  };
  return { window: next, counts };
}

export interface WaitSayingInput {
  session: Pick<UpgradeSession, 'pollIntervalSeconds' | 'state'>;
  /** The window as the increment found it, and after it. */
  before: Pick<WindowProgress, 'waitSaid'>;
  after: WindowProgress;
  /** What holds nodes back now, if anything: `about` names the gate (a change is said at once), `text` says it. */
  wait: { about: string; text: string } | undefined;
  now: number;
}

/**
 * A run held back by a gate (a maintenance window, an approval, a bake, a pause, its failure budget,
 * nodes another session holds) says why in a message when it starts waiting, and again at every poll
 * while it waits (not more often: increments that come sooner, because something moved, say nothing
 * new), so that a run that makes no progress is never silent. What it said last, and when, is kept on the window.
 */
export function sayWhyWaiting({ session, before, after, wait, now }: WaitSayingInput): { window: WindowProgress; message?: string } {
  const { waitSaid: _said, ...rest } = after;
  if (!wait || session.state === 'STOPPING' || session.state === 'DELETING') return { window: rest };
  const last = before.waitSaid;
  const due = last === undefined || last.about !== wait.about || now - last.at >= session.pollIntervalSeconds * 1000;
  if (!due) return { window: { ...rest, waitSaid: last } };
  return { window: { ...rest, waitSaid: { at: now, about: wait.about } }, message: `Window waiting: ${wait.text}` };
}

/** What holds nodes back in this increment, for sayWhyWaiting: a gate of the scheduler, or nodes whose lock another session holds. */
function heldBack(input: {
  session: Pick<UpgradeSession, 'upgradeId'>;
  decision: Decision;
  state: ScheduleState;
  lockedOut: readonly string[];
  halted: string | undefined;
  now: number;
}): { about: string; text: string } | undefined {
  const { session, decision, state, lockedOut, halted, now } = input;
  // A gate is said only while some node is held back by it (a gated node waits for no gate; nodes in flight finish regardless).
  const gated = new Set(decision.gated.map((g) => g.op));
  const held = state.ops.some((op) => op.state === 'TODO' && !gated.has(op.id));
  if (held && decision.wait) {
    const about = decision.wait.kind === 'approval' ? `approval of batch ${decision.wait.wave + 1}` : decision.wait.kind;
    return { about, text: waitText(decision.wait, session.upgradeId, halted, now) };
  }
  if (lockedOut.length > 0)
    return {
      about: 'locked by another session',
      text: `${lockedOut.length} node(s) could start, but another session holds their lock: ${shortList(lockedOut)}`,
    };
  return undefined;
}

function waitText(wait: WaitReason, upgradeId: string, halted: string | undefined, now: number): string {
  switch (wait.kind) {
    case 'maintenance-window':
      return wait.until === undefined
        ? 'no maintenance window is open, and none opens: no node starts'
        : `no maintenance window is open; the next opens in ${formatWait((wait.until - now) / 1000)}: no node starts until then`;
    case 'approval':
      return `batch ${wait.wave + 1} waits for its approval: rollout session approve ${upgradeId}`;
    case 'bake':
      return `baking after the last batch for ${formatWait((wait.until - now) / 1000)} more before the next starts`;
    case 'paused':
      return `paused by its operator: no node starts until rollout session resume ${upgradeId}`;
    case 'halted':
      return `halted${halted ? ` (${halted})` : ''}: no node starts; the nodes in flight finish`;
  }
}

export interface WindowEndInput {
  session: Pick<UpgradeSession, 'state'>;
  progress: Progress;
  decision: Decision;
  /** The window and counts after the increment; whether any node is still in flight; the run's halt. */
  window: WindowProgress;
  counts: NonNullable<Progress['counts']>;
  inFlight: boolean;
  halted: ScheduleState['halted'];
  /** The TODO nodes outside the view (when the run finishes halted), recorded left alone. */
  outsideTodo: readonly NodeRecord[];
  records: RecordsNow;
  now: number;
}

/**
 * Phase "end": a deleted run with nothing in flight hands over to the delete sequence (CANCELLING,
 * the rest recorded left alone in chunks); a stopped one with nothing in flight closes STOPPED
 * (through CLEANUP); a finished one records the nodes left alone and why, and cleans up. Else the
 * window rolls on.
 */
export function decideWindowEnd({ session, progress, decision, window, counts, inFlight, halted, outsideTodo, records, now }: WindowEndInput): {
  progress: Progress;
  writes: NodeRecord[];
  message?: string;
} {
  if (session.state === 'DELETING' && !inFlight) {
    return { progress: enterStage('CANCELLING', 0, now, { cancelMode: 'record-remaining', cancelCursor: 0, window, counts }), writes: [] };
  }
  if (session.state === 'STOPPING' && !inFlight && !decision.finished) {
    // A resume carries the window on.
    return {
      progress: enterStage('CLEANUP', 0, now, { stop: { stage: 'ROLLING', step: 0 }, window, counts }),
      writes: [],
      message: 'Window stopped: nothing in flight; the nodes not started are left as they were',
    };
  }
  if (!decision.finished) return { progress: { ...progress, window, counts }, writes: [] };
  const reasons = new Map(decision.leftAlone.map(({ op, reason }) => [upgradeOpNode(op), reason]));
  for (const record of outsideTodo) if (decision.leftAloneOutside !== undefined) reasons.set(record.name, decision.leftAloneOutside);
  const writes = [...reasons].map(([name, reason]): NodeRecord => {
    const { op: _op, phase: _phase, ...rest } = records.get(name)!;
    return { ...rest, status: 'NOT_STARTED', reason: `left alone: ${reason}` };
  });
  return {
    progress: enterStage('CLEANUP', 0, now, { window: { ...window, finishedAt: now }, counts }),
    writes,
    message: halted ? `Window finished halted: ${halted.reason}` : 'Window: every node of the plan is done',
  };
}

export interface WindowWaitInput {
  session: Pick<UpgradeSession, 'state' | 'pollIntervalSeconds' | 'quiesceTimeoutSeconds' | 'bootTimeoutSeconds' | 'wlmReturnTimeoutSeconds' | 'healthCheck'>;
  decision: Pick<Decision, 'recheckAt' | 'wait'>;
  next: Progress;
  /** Something moved in this increment (a node started, admitted, released, booted; an index entry settled). */
  moved: boolean;
  inFlight: boolean;
  now: number;
  /** The records in flight after this increment: their phases' timeouts bound a wait resumed by site events. */
  inFlightRecords?: readonly NodeRecord[];
}

/**
 * Phase "wait": on at once when something moved or the stage changed; else poll (sooner when the
 * scheduler's decision may change by itself: a bake's end, a maintenance window). When only the
 * operator can move it (an approval or a pause, nothing in flight), park on a task token rather than poll.
 */
export function windowWait({ session, decision, next, moved, inFlight, now, inFlightRecords }: WindowWaitInput): {
  waitSeconds: number;
  waitForOperator?: true;
  siteWait?: SiteWait;
} {
  const recheck = decision.recheckAt !== undefined ? Math.max(1, Math.ceil((decision.recheckAt - now) / 1000)) : Infinity;
  const waitSeconds = next.stage !== 'ROLLING' || moved ? 0 : Math.min(session.pollIntervalSeconds, recheck);
  const operatorOnly =
    (decision.wait?.kind === 'approval' || decision.wait?.kind === 'paused') && !inFlight && !moved && session.state !== 'DELETING' && next.stage === 'ROLLING';
  // Nodes in flight wait for the site (drained, back, their health check's end); no sooner than the first of their timeouts or the scheduler's own recheck.
  const { deadline, checking, afterBoot, quiesce } = inFlightDeadline(session, inFlightRecords ?? []);
  const untilDeadline = deadline !== undefined ? Math.max(1, Math.ceil((deadline - now) / 1000)) : Infinity;
  const recheckSeconds = Math.min(recheck, untilDeadline);
  const siteWait =
    waitSeconds > 0 && inFlight
      ? {
          siteWait: {
            ...(Number.isFinite(recheckSeconds) ? { recheckSeconds } : {}),
            ...(quiesce ? { quiesce } : {}),
            ...(afterBoot ? { afterBoot } : {}),
            ...(checking ? { commandEnd: true } : {}),
          },
        }
      : {};
  return { waitSeconds, ...(operatorOnly ? { waitForOperator: true as const } : {}), ...siteWait };
}

export interface WindowActionsInput {
  session: UpgradeSession;
  /** The intent (the started nodes in the index, the boot count), saved before anything is done; absent when nothing starts or boots. */
  intent?: { expected: Progress; progress: Progress };
  started: readonly NodeRecord[];
  drain: readonly string[];
  resume: readonly string[];
  back: readonly string[];
  failures: ReadonlyMap<string, readonly string[]>;
  wlm: ReadonlyMap<string, WlmNode>;
  /** Every record the increment changed (other than the started ones). */
  written: readonly NodeRecord[];
  checks?: NodeAction;
  boots: readonly NodeAction[];
  /** Nodes whose lock is given back. */
  unlock: readonly string[];
}

/**
 * The increment's actions, in the order that makes a crash anywhere safe to retry: the intent is
 * saved before the started nodes are recorded, and they are recorded before they are drained; a node
 * is resumed or failed before it is recorded done; records (BOOTING included) are written before
 * boots start; locks are given back last.
 */
export function orderWindowActions({
  session,
  intent,
  started,
  drain,
  resume,
  back,
  failures,
  wlm,
  written,
  checks,
  boots,
  unlock,
}: WindowActionsInput): NodeAction[] {
  return [
    ...(intent ? [{ type: 'saveProgress' as const, ...intent }] : []),
    ...(started.length > 0 ? [{ type: 'recordNodes' as const, records: [...started] }] : []),
    ...(drain.length > 0 ? [{ type: 'drain' as const, nodes: [...drain], reason: drainClaim('upgrade', session.upgradeId) }] : []),
    ...(resume.length > 0 ? [{ type: 'resume' as const, nodes: [...resume] }] : []),
    ...returnToService(back, wlm),
    ...[...failures].flatMap(([reason, nodes]) =>
      failInSite(
        session,
        nodes.map((name) => ({ name })),
        reason,
        wlm,
      ),
    ),
    ...(written.length > 0 ? [{ type: 'recordNodes' as const, records: [...written] }] : []),
    ...(checks ? [checks] : []),
    ...boots,
    ...releaseLocks(unlock.map((name) => ({ name }))),
  ];
}

export interface DecideWindowInput extends WindowInput {
  /** The scheduler's decision for this increment (scheduleWindow). */
  decision: Decision;
  /** Nodes whose lock another session holds: they do not start. */
  lockedByOthers: ReadonlySet<string>;
  /** When the run finishes halted: the TODO nodes outside the view, recorded left alone. */
  outsideTodo?: readonly NodeRecord[];
}

/** A boot session of a node in flight that acted upon none of its nodes: the run's error (none of its nodes failed). */
function emptyBootOfView(view: Pick<WindowView, 'inFlight'>, boots: WindowObserved['boots']): EmptyBootSessionError | undefined {
  for (const record of view.inFlight) {
    const empty = record.phase === 'BOOTING' && record.boot ? emptyBootSession(boots.get(record.boot.session)) : undefined;
    if (empty) return empty;
  }
  return undefined;
}

/** The records as the increment's phases write them: each phase reads what the earlier ones wrote; `written` keeps what changed. */
class IncrementRecords {
  readonly current: Map<string, NodeRecord>;
  readonly written = new Map<string, NodeRecord>();

  constructor(records: readonly NodeRecord[]) {
    this.current = new Map(records.map((r) => [r.name, r]));
  }

  write(changed: readonly NodeRecord[]): void {
    for (const record of changed) {
      this.written.set(record.name, record);
      this.current.set(record.name, record);
    }
  }
}

const opsByNode = (state: ScheduleState) => new Map(state.ops.map((op) => [op.node, op]));

/** What the node phases of one increment did, for the recount, the actions and the messages. */
interface WindowMoves {
  /** The schedule with the decision applied and the outcomes recorded. */
  state: ScheduleState;
  starts: Starts;
  putBack: PutBack;
  advance: InFlightAdvance;
  /** Nodes whose lock is given back: released ahead, and those whose op ended or was put back. */
  released: string[];
  failures: Map<string, string[]>;
  settled: { ended: NodeRecord[]; messages: string[] };
  checks?: NodeAction;
  boots: ReturnType<typeof decideBoots>;
}

/**
 * The node phases, in order: start and admit, put back what was released ahead, move every node in
 * flight, settle the ops that ended, start health checks and boots. Each writes `records` as it goes.
 */
function moveWindowNodes(
  input: Pick<DecideWindowInput, 'session' | 'view' | 'observed' | 'now' | 'decision'> & WindowSchedule,
  records: IncrementRecords,
): WindowMoves {
  const { session, view, observed, now, decision, window } = input;
  let state = applyDecision(input.state, decision, now);
  const startNames = decision.start.map((s) => upgradeOpNode(s.op));
  const admit = decision.admit.map(upgradeOpNode);
  const starts = decideStarts({ session, start: startNames, admit, ops: opsByNode(state), records: records.current, wlm: observed.wlm });
  records.write(starts.admitted);
  const releasedAhead = decision.release.map(({ op }) => upgradeOpNode(op));
  const putBack = decidePutBack(releasedAhead, records.current, observed.wlm);
  records.write(putBack.records);

  const startedNow = new Set(startNames);
  const advance = advanceInFlight({ session, inFlight: view.inFlight, startedNow, ops: opsByNode(state), records: records.current, observed, now });
  records.write(advance.writes);
  const putBackNow = new Set(advance.putBack);
  state = { ...state, ops: state.ops.map((o) => (putBackNow.has(o.node) ? { ...o, state: 'TODO' as const } : o)) };
  for (const [name, outcome] of advance.outcomes) state = recordOutcome(state, upgradeOpId(name), outcome, now);

  const released = [...releasedAhead, ...advance.released];
  const failures = failuresByReason(advance.outcomes);
  const settled = settleEnded({ ops: state.ops, released, records: records.current, failures, unhealthy: advance.unhealthy });
  records.write(settled.ended);
  const command = healthCheckCommand(session);
  const checks = advance.toCheck.length > 0 && command ? startChecks(advance.toCheck, command, now) : undefined;
  const { toBoot, restartBoots } = advance;
  const boots = decideBoots({ session, toBoot, restartBoots, bootCount: window.bootCount, records: records.current, now });
  records.write(boots.writes);
  return { state, starts, putBack, advance, released, failures, settled, ...(checks ? { checks } : {}), boots };
}

/** How the increment closes: the window and counts after it, what holds nodes back (said), and where the run goes next. */
interface WindowClose {
  window: WindowProgress;
  counts: NonNullable<Progress['counts']>;
  /** Some node is still in flight. */
  inFlight: boolean;
  end: ReturnType<typeof decideWindowEnd>;
  waitMessage?: string;
}

/** The closing phases, in order: recount, say why the run waits, end. The end writes `records` (nodes left alone). */
function closeWindow(
  input: Pick<DecideWindowInput, 'session' | 'progress' | 'view' | 'observed' | 'now' | 'decision'> & {
    window: WindowProgress;
    lockedOut: readonly string[];
    outsideTodo: readonly NodeRecord[];
  },
  moves: WindowMoves,
  records: IncrementRecords,
): WindowClose {
  const { session, progress, view, observed, now, decision, window, lockedOut, outsideTodo } = input;
  const { state } = moves;
  const counted = windowAfter({
    session,
    window,
    state,
    decision,
    counts: progress.counts,
    view,
    ended: moves.settled.ended,
    records: records.current,
    bootCount: moves.boots.bootCount,
    outside: observed.outside,
    now,
  });
  const holding = heldBack({ session, decision, state, lockedOut, halted: counted.window.halted?.reason, now });
  const waitSaid = sayWhyWaiting({ session, before: window, after: counted.window, wait: holding, now });
  const after = { ...counted, window: waitSaid.window };
  const inFlight = after.window.inFlight!.length > 0;
  const end = decideWindowEnd({
    session,
    progress,
    decision,
    window: after.window,
    counts: after.counts,
    inFlight,
    halted: state.halted,
    outsideTodo,
    records: records.current,
    now,
  });
  records.write(end.writes);
  return { ...after, inFlight, end, ...(waitSaid.message !== undefined ? { waitMessage: waitSaid.message } : {}) };
}

/** The increment's messages, in the order its phases ran. */
function windowMessages(moves: WindowMoves, close: WindowClose, decision: Decision, wlm: WindowObserved['wlm']): string[] {
  const { starts, settled, advance, boots } = moves;
  const unrestored = unrestoredReasons(advance.back, wlm);
  return [
    starts.message,
    ...settled.messages,
    advance.toCheck.length > 0 ? `Window: health check started on ${advance.toCheck.length} node(s): ${shortList(names(advance.toCheck))}` : undefined,
    boots.message,
    unrestored === undefined ? undefined : `Window: ${unrestored}`,
    decision.halt ? `Window halted: ${decision.halt.reason}; nodes in flight finish, no new node starts` : undefined,
    close.waitMessage,
    close.end.message,
  ].filter((m) => m !== undefined);
}

/**
 * One ROLLING increment, given the scheduler's decision, the nodes whose lock another session holds
 * (those do not start) and, when the run finishes halted, the TODO nodes outside the view (recorded
 * left alone): the phases above, in order, each reading the records as the earlier ones wrote them.
 * The order of the actions makes a crash anywhere safe to retry (orderWindowActions): the started nodes
 * enter the in-flight index (with the boot count) before they are recorded, and are recorded before
 * they are drained; a node is resumed or failed before it is recorded done, recorded done before it
 * leaves the index, and leaves the index in the progress write that counts it; a node is recorded
 * BOOTING before its boot starts (a boot session the boot service does not know is started again
 * for the nodes recorded in it).
 */
export function decideWindow(input: DecideWindowInput): StageDecision {
  const { session, progress, view, observed, now } = input;
  const empty = emptyBootOfView(view, observed.boots);
  if (empty) return { progress, waitSeconds: 0, actions: [], error: empty };
  const { window, state } = input.schedule ?? windowSchedule(session, progress, view);
  const outsideTodo = input.outsideTodo ?? [];
  const lockedOut = input.decision.start.map((s) => upgradeOpNode(s.op)).filter((name) => input.lockedByOthers.has(name));
  const decision: Decision = { ...input.decision, start: input.decision.start.filter((s) => !input.lockedByOthers.has(upgradeOpNode(s.op))) };
  const records = new IncrementRecords([...view.inFlight, ...view.candidates, ...outsideTodo]);

  const moves = moveWindowNodes({ session, view, observed, now, decision, window, state }, records);
  const close = closeWindow({ session, progress, view, observed, now, decision, window, lockedOut, outsideTodo }, moves, records);

  const { starts, putBack, advance, boots } = moves;
  // The intent: the started nodes enter the index (and the boot count is saved) before anything is done to them.
  const intentIndex = [...new Set([...(window.inFlight ?? []), ...starts.started.map((r) => r.index)])];
  const intent = starts.started.length > 0 || boots.bootCount !== window.bootCount;
  const actions = orderWindowActions({
    session,
    ...(intent ? { intent: { expected: progress, progress: { ...progress, window: { ...window, bootCount: boots.bootCount, inFlight: intentIndex } } } } : {}),
    started: starts.started,
    drain: [...starts.drain, ...advance.drain],
    resume: [...putBack.resume, ...advance.resume],
    back: advance.back,
    failures: moves.failures,
    wlm: observed.wlm,
    written: [...records.written.values()],
    ...(moves.checks ? { checks: moves.checks } : {}),
    boots: boots.actions,
    // Index entries that had left flight (settled) or were bare intents (dropped) give back the lock taken for them.
    unlock: [...moves.released, ...view.settled.filter((r) => r.phase !== 'LOCK_LOST').map((r) => r.name), ...names(view.dropped)],
  });
  const messages = windowMessages(moves, close, decision, observed.wlm);

  // A node just recorded booted is judged back (or checked) at once: Slurm's `up` for it has fired already.
  const booted = advance.writes.some((r) => r.phase === 'BOOTED');
  const moved =
    booted || decision.start.length + decision.admit.length + moves.released.length + advance.toBoot.length + view.settled.length + view.dropped.length > 0;
  // The nodes whose health check starts now are waited for as CHECKING (their check's end), not as booted.
  const checksStarted = new Map((moves.checks?.type === 'startHealthChecks' ? moves.checks.records : []).map((r) => [r.name, r]));
  const inFlightRecords = [...records.current.values()].map((r) => checksStarted.get(r.name) ?? r).filter((r) => r.status === 'IN_PROGRESS');
  const wait = windowWait({ session, decision, next: close.end.progress, moved, inFlight: close.inFlight, now, inFlightRecords });
  return { progress: close.end.progress, ...wait, actions, ...(messages.length > 0 ? { message: messages.join('\n') } : {}) };
}
