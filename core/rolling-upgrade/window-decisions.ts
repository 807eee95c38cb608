import { applyDecision, commitSchedule, proposeSchedule, recordOutcome, schedule, type Decision, type Observations, type ScheduleState } from '../scheduling';
import type { BootSessionStatus, InventoryNode, WlmNode } from '../site/site-nodes';
import { shortList } from '../text';
import { drainClaim } from '../site/node-claims';
import { FailureReason, type NodePhase, type NodeRecord, type WindowProgress } from './session';
import { enterStage, failInSite, isDrained, isOurDrain, names, needsOurDrain, releaseLocks, returnToService, type NodeAction, type StageDecision } from './stage-decision';
import { upgradeOperations, upgradeOpId, upgradePolicy } from './upgrade-policy';
import { emptyMarks, hasPosition, Mark, withMarks, withPositions } from './plan-marks';
import { hasNoJob, isQuiet } from './wlm-readiness';
import { describeHealthFailures, returnVerdict, startChecks, type HealthCheckResult } from './health-check';
import { healthCheckCommand } from './upgrade-request';
import type { Progress, UpgradeSession } from './session';
import { learnSlotSeconds } from './slot-plan';

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
  const { bootCount: _count, outsideDownAtStart: _outside, inFlight: _index, marks: _marks, waveEnded, waveLastEndedAt, draining: _draining, releasedAhead: _released, ...rest } = window;
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
  return outside === undefined ? [] : [...outside.values()].filter(isDownOrFailed).map((n) => n.name).sort();
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
  const nodes: Record<string, Observations['nodes'][string]> = {};
  for (const record of records) {
    const inv = observed.inventory.get(record.name);
    const wlm = observed.wlm.get(record.name);
    nodes[record.name] = {
      alive: wlm !== undefined && inv?.alive !== false,
      available: inv?.available !== false,
      ...(observed.claimedElsewhere?.has(record.name) ? { claimedElsewhere: true } : {}),
      ...(inv?.rack !== undefined ? { rack: inv.rack } : {}),
      ...remainingJob(record.name, wlm, observed.jobEnds, now),
    };
  }
  // Only nodes that went DOWN or FAIL since the first increment count (those already down then do not).
  const before = new Set(window.outsideDownAtStart ?? outsideDown(observed.outside));
  return { nodes, outsideFailures: outsideDown(observed.outside).filter((name) => !before.has(name)) };
}

function remainingJob(name: string, wlm: WlmNode | undefined, jobEnds: ReadonlyMap<string, number> | undefined, now: number): { remainingJobSeconds?: number } {
  if (wlm === undefined) return {};
  if (hasNoJob(wlm)) return { remainingJobSeconds: 0 };
  const end = jobEnds?.get(name);
  return end === undefined ? {} : { remainingJobSeconds: Math.max(0, (end - now) / 1000) };
}

export interface WindowInput {
  session: UpgradeSession;
  progress: Progress;
  view: WindowView;
  observed: WindowObserved;
  now: number;
}

/** The annealer's pass for this increment (nothing starts once the session is being deleted). */
export function scheduleWindow({ session, progress, view, observed, now }: WindowInput): Decision {
  const window = gatedWindow(session, progress.window ?? initialWindowProgress(session.nodeCount));
  const state = windowScheduleState(view, window, progress.counts);
  const decision = schedule(state, upgradePolicy(session, session.nodeCount), now, windowObservations([...view.inFlight, ...view.candidates], observed, now, window));
  if (session.state === 'STOPPING') {
    // Stopping: start nothing and open no wave; the run finishes by the scheduler only if nothing was left to start (or it halted).
    return { ...decision, start: [], admit: [], wave: window.wave, ...(decision.finished ? {} : { leftAlone: [], blocked: [] }) };
  }
  if (session.state !== 'DELETING') return decision;
  // Deleting: start nothing, and no run "finishes" by the scheduler: the delete sequence takes over.
  return { ...decision, start: [], admit: [], finished: false, leftAlone: [], blocked: [] };
}

type Outcome = { ok: true } | { ok: false; error: string };

/** The slot length learned from the nodes upgraded in this increment (admitted to back in service). */
function slotLearned(previous: number | undefined, ended: readonly NodeRecord[], now: number): { slotSeconds?: number } {
  const held = ended.flatMap((r) => (r.status === 'UPGRADED' && r.op?.admittedAt !== undefined ? [(now - r.op.admittedAt) / 1000] : []));
  const learned = learnSlotSeconds(previous, held);
  return learned === undefined ? {} : { slotSeconds: Math.round(learned) };
}

const MARK_OF_STATUS: Partial<Record<NodeRecord['status'], Mark>> = { UPGRADED: Mark.upgraded, FAILED: Mark.failed };

/**
 * One ROLLING increment, given the scheduler's decision, the nodes whose lock another session holds
 * (those do not start) and, when the run finishes halted, the TODO nodes outside the view (recorded
 * left alone). The order of the actions makes a crash anywhere safe to retry: the started nodes
 * enter the in-flight index (with the boot count) before they are recorded, and are recorded before
 * they are drained; a node is resumed or failed before it is recorded done, recorded done before it
 * leaves the index, and leaves the index in the progress write that counts it; a node is recorded
 * BOOTING before its boot starts (a boot session the boot service does not know is started again
 * for the nodes recorded in it).
 */
export function decideWindow(input: WindowInput & { decision: Decision; lockedByOthers: ReadonlySet<string>; outsideTodo?: readonly NodeRecord[] }): StageDecision {
  const { session, progress, view, observed, now, lockedByOthers } = input;
  const window = gatedWindow(session, progress.window ?? initialWindowProgress(session.nodeCount));
  const viewRecords = [...view.inFlight, ...view.candidates, ...(input.outsideTodo ?? [])];
  const byName = new Map(viewRecords.map((r) => [r.name, r]));
  const opNode = (opId: string) => opId.slice(0, -'/upgrade'.length);
  const decision: Decision = { ...input.decision, start: input.decision.start.filter((s) => !lockedByOthers.has(opNode(s.op))) };
  const deleting = session.state === 'DELETING';
  // A stop puts back what is not rebooted yet, as a cancel does, but the session ends STOPPED (resumable) instead.
  const stopping = session.state === 'STOPPING';

  let state = applyDecision(windowScheduleState(view, window, progress.counts), decision, now);
  const changed = new Map<string, NodeRecord>();
  const put = (record: NodeRecord) => changed.set(record.name, record);
  const current = (name: string) => changed.get(name) ?? byName.get(name)!;
  const opOf = (name: string) => state.ops.find((op) => op.node === name)!;
  const storedOp = (name: string): NodeRecord['op'] => {
    const op = opOf(name);
    if (op.state !== 'TRANSITION' && op.state !== 'ACTIVE' && op.state !== 'ERROR') return undefined;
    const { state: s, holdsSlot, wave, startedAt, admittedAt, endedAt } = op;
    return { state: s, ...(holdsSlot !== undefined ? { holdsSlot } : {}), ...(wave !== undefined ? { wave } : {}),
      ...(startedAt !== undefined ? { startedAt } : {}), ...(admittedAt !== undefined ? { admittedAt } : {}), ...(endedAt !== undefined ? { endedAt } : {}) };
  };
  const withOp = (record: NodeRecord): NodeRecord => {
    const op = storedOp(record.name);
    const { op: _old, ...rest } = record;
    return op ? { ...rest, op } : rest;
  };

  const drain: string[] = [];
  const resume: string[] = [];
  const failures = new Map<string, string[]>();
  const release: string[] = [];
  const messages: string[] = [];
  const end = (name: string, outcome: Outcome) => {
    state = recordOutcome(state, upgradeOpId(name), outcome, now);
    if (!outcome.ok) failures.set(outcome.error, [...(failures.get(outcome.error) ?? []), name]);
    release.push(name);
  };

  // Started now: recorded in flight (intent), then drained (a node already drained, by us or an admin, keeps its drain and reason).
  const started: NodeRecord[] = [];
  for (const { op } of decision.start) {
    const name = opNode(op);
    if (needsOurDrain(observed.wlm.get(name), session.upgradeId)) drain.push(name);
    started.push(withOp({ ...current(name), status: 'IN_PROGRESS', phase: 'DRAINING' }));
  }
  if (decision.start.length > 0) messages.push(`Window: draining ${decision.start.length} node(s): ${shortList(decision.start.map((s) => opNode(s.op)))}`);
  for (const op of decision.admit) put(withOp(current(opNode(op))));

  // Released (gated, no free slot when due) or, when deleting, not booted yet: our drain is lifted.
  const lift = (name: string, reason?: string) => {
    if (isOurDrain(observed.wlm.get(name))) resume.push(name);
    const { op: _op, phase: _phase, boot: _boot, check: _check, reason: _reason, lockToken: _token, phaseTimes: _times, ...rest } = current(name);
    put({ ...rest, status: 'NOT_STARTED', ...(reason ? { reason } : {}) });
    release.push(name);
  };
  for (const { op } of decision.release) lift(opNode(op));

  // Every node in flight, one phase at a time.
  const toBoot: string[] = [];
  const toCheck: NodeRecord[] = [];
  const unhealthy: { name: string; detail: string }[] = [];
  const rebootMissing = new Map<string, string[]>();
  const back: string[] = [];
  const startedNow = new Set(decision.start.map((s) => opNode(s.op)));
  for (const record of view.inFlight) {
    const op = opOf(record.name);
    if (op.state !== 'TRANSITION' || startedNow.has(record.name)) continue;
    const wlm = observed.wlm.get(record.name);
    const phase = record.phase;
    if ((deleting || stopping) && (phase === 'DRAINING' || phase === 'QUIESCED')) {
      state = { ...state, ops: state.ops.map((o) => (o.id === op.id ? { ...o, state: 'TODO' as const } : o)) };
      lift(record.name);
      continue;
    }
    if (phase === 'DRAINING' || phase === 'QUIESCED') {
      // Recorded in flight, but the increment that did it died before its drain: drain it now (once: it is not drained).
      if (phase === 'DRAINING' && wlm !== undefined && !isDrained(wlm)) drain.push(record.name);
      if (!op.holdsSlot) {
        if (phase === 'DRAINING' && now - (op.startedAt ?? now) >= session.quiesceTimeoutSeconds * 1000) end(record.name, { ok: false, error: FailureReason.quiesceTimeout });
        continue;
      }
      if (phase === 'QUIESCED' || (wlm !== undefined && isQuiet(wlm))) toBoot.push(record.name);
      else if (now - (op.startedAt ?? now) >= session.quiesceTimeoutSeconds * 1000) end(record.name, { ok: false, error: FailureReason.quiesceTimeout });
      continue;
    }
    if (phase === 'BOOTING' && record.boot) {
      const boot = observed.boots.get(record.boot.session);
      if (!boot) {
        rebootMissing.set(record.boot.session, [...(rebootMissing.get(record.boot.session) ?? []), record.name]);
        continue;
      }
      const timedOut = now - record.boot.requestedAt >= session.bootTimeoutSeconds * 1000;
      const outcome = boot.error ? 'failed' : boot.nodes[record.name];
      if (outcome === 'succeeded') put({ ...current(record.name), phase: 'BOOTED', boot: { ...record.boot, finishedAt: now } });
      else if (boot.status === 'complete' || outcome === 'failed') end(record.name, { ok: false, error: FailureReason.bootFailed });
      else if (timedOut) end(record.name, { ok: false, error: FailureReason.bootTimeout });
      continue;
    }
    if ((phase === 'BOOTED' || phase === 'CHECKING') && record.boot) {
      const verdict = returnVerdict(session, record, wlm, record.boot.requestedAt, observed.checks?.get(record.name), now);
      if (verdict.kind === 'back') {
        back.push(record.name);
        end(record.name, { ok: true });
      } else if (verdict.kind === 'check') {
        toCheck.push(current(record.name));
      } else if (verdict.kind === 'failed') {
        unhealthy.push({ name: record.name, detail: verdict.detail });
        end(record.name, { ok: false, error: verdict.reason });
      } else if (!verdict.checking && now - (record.boot.finishedAt ?? record.boot.requestedAt) >= session.wlmReturnTimeoutSeconds * 1000) {
        end(record.name, { ok: false, error: FailureReason.wlmTimeout });
      }
    }
  }

  // Ended: upgraded or failed, with the reason; locks released below.
  const ended: NodeRecord[] = [];
  for (const op of state.ops) {
    if (!release.includes(op.node) || (op.state !== 'ACTIVE' && op.state !== 'ERROR')) continue;
    const { lockToken: _token, ...record } = current(op.node);
    const done = withOp({ ...record, status: op.state === 'ACTIVE' ? 'UPGRADED' : 'FAILED', phase: 'DONE', ...(op.error ? { reason: op.error } : {}) });
    put(done);
    ended.push(done);
  }
  const upgraded = ended.filter((r) => r.status === 'UPGRADED').map((r) => r.name);
  if (upgraded.length > 0) messages.push(`Window: ${upgraded.length} node(s) back in service: ${shortList(upgraded)}`);
  for (const [reason, nodes] of failures) {
    messages.push(`Window: ${nodes.length} node(s) failed with ${reason}: ${reason === FailureReason.healthCheckFailed ? describeHealthFailures(unhealthy) : shortList(nodes)}`);
  }
  const command = healthCheckCommand(session);
  if (toCheck.length > 0) messages.push(`Window: health check started on ${toCheck.length} node(s): ${shortList(names(toCheck))}`);

  // The newly quiet nodes boot together: one boot session, limited to exactly them.
  let bootCount = window.bootCount;
  const boots: NodeAction[] = [];
  if (toBoot.length > 0) {
    const name = windowBootSessionName(session.upgradeId, bootCount++);
    // Quiet now (drained, no job), and rebooted now: both phases stamped (the quiet one was never written on its own).
    for (const node of toBoot) {
      const record = current(node);
      put({ ...record, phase: 'BOOTING', boot: { session: name, requestedAt: now }, phaseTimes: { ...record.phaseTimes, QUIESCED: record.phaseTimes?.QUIESCED ?? now } });
    }
    boots.push({ type: 'startBoot', name, template: session.upgradeTemplateId, limit: toBoot.join(',') });
    messages.push(`Window: boot session ${name} started for ${toBoot.length} node(s) with template ${session.upgradeTemplateId}`);
  }
  for (const [name, nodes] of rebootMissing) boots.push({ type: 'startBoot', name, template: session.upgradeTemplateId, limit: nodes.join(',') });

  // The index after this increment: in flight now; the nodes that left it marked and counted, in the same write.
  const positionOf = new Map([...viewRecords, ...view.settled, ...view.dropped].map((r) => [r.name, r.index]));
  const inFlightNow = state.ops.filter((op) => op.state === 'TRANSITION').map((op) => positionOf.get(op.node)!);
  const leaving = [...ended, ...view.settled];
  const marks = new Map<number, Mark>(leaving.map((r) => [r.index, r.phase === 'LOCK_LOST' ? Mark.gone : MARK_OF_STATUS[r.status] ?? Mark.gone]));
  const counted = (status: NodeRecord['status']) => leaving.filter((r) => r.status === status && r.phase !== 'LOCK_LOST').length;
  const counts = { upgraded: (progress.counts?.upgraded ?? 0) + counted('UPGRADED'), failed: (progress.counts?.failed ?? 0) + counted('FAILED') };
  const newWave = state.wave !== window.wave;
  // A settled entry ended in an increment whose progress write was lost: its wave counts it now.
  const endedInWave = leaving.filter((r) => r.phase !== 'LOCK_LOST' && r.op?.wave === state.wave).length;
  const draining = state.ops.filter((op) => op.state === 'TRANSITION' && (current(op.node).phase ?? 'DRAINING') === 'DRAINING').length;
  // Drained ahead: in flight without a slot (not counted against maxUnavailable).
  const ahead = state.ops.filter((op) => op.state === 'TRANSITION' && op.holdsSlot === false).length;
  const phases: Partial<Record<NodePhase, number>> = {};
  for (const op of state.ops) {
    if (op.state !== 'TRANSITION') continue;
    const phase = current(op.node).phase ?? 'DRAINING';
    phases[phase] = (phases[phase] ?? 0) + 1;
  }

  const nextWindow: WindowProgress = {
    wave: state.wave,
    approvedWaves: state.approvedWaves,
    paused: state.paused,
    ...(state.halted ? { halted: state.halted } : {}),
    ...(decision.wait ? { waiting: decision.wait.kind === 'approval' ? `approval of batch ${decision.wait.wave + 1}` : decision.wait.kind } : {}),
    // Kept while paused too: an operator may approve the batch before lifting the pause.
    ...(decision.approvalDue !== undefined ? { awaitingApproval: decision.approvalDue } : {}),
    bootCount,
    ...(window.outsideDownAtStart !== undefined || observed.outside !== undefined
      ? { outsideDownAtStart: window.outsideDownAtStart ?? outsideDown(observed.outside) }
      : {}),
    inFlight: inFlightNow,
    marks: withMarks(window.marks ?? emptyMarks(session.nodeCount), marks),
    waveEnded: (newWave ? 0 : (window.waveEnded ?? 0)) + endedInWave,
    // A batch's counts when it closes are the counts then less these (every node of the wave before has ended when a wave opens).
    ...(newWave ? { waveStartCounts: counts } : window.waveStartCounts ? { waveStartCounts: window.waveStartCounts } : {}),
    ...(endedInWave > 0 ? { waveLastEndedAt: now } : !newWave && window.waveLastEndedAt !== undefined ? { waveLastEndedAt: window.waveLastEndedAt } : {}),
    draining,
    ahead,
    phases,
    ...(session.reserveSlots ? slotLearned(window.slotSeconds, ended, now) : {}),
    ...(decision.release.length > 0 || window.releasedAhead !== undefined
      ? { releasedAhead: withPositions(window.releasedAhead, session.nodeCount, decision.release.map(({ op }) => byName.get(opNode(op))!.index)) }
      : {}),
  };
  if (decision.halt) messages.push(`Window halted: ${decision.halt.reason}; nodes in flight finish, no new node starts`);
  const inFlight = inFlightNow.length > 0;

  const failedActions = [...failures].flatMap(([reason, nodes]) => failInSite(session, nodes.map((name) => ({ name })), reason, observed.wlm));
  // The intent: the started nodes enter the index (and the boot count is saved) before anything is done to them.
  const intentIndex = [...new Set([...(window.inFlight ?? []), ...started.map((r) => r.index)])];
  const intent = started.length > 0 || bootCount !== window.bootCount;
  const actions: NodeAction[] = [
    ...(intent ? [{ type: 'saveProgress' as const, expected: progress, progress: { ...progress, window: { ...window, bootCount, inFlight: intentIndex } } }] : []),
    ...(started.length > 0 ? [{ type: 'recordNodes' as const, records: started }] : []),
    ...(drain.length > 0 ? [{ type: 'drain' as const, nodes: drain, reason: drainClaim('upgrade', session.upgradeId) }] : []),
    ...(resume.length > 0 ? [{ type: 'resume' as const, nodes: resume }] : []),
    ...returnToService(back, observed.wlm),
    ...failedActions,
  ];

  let next: Progress = { ...progress, window: nextWindow, counts };
  if (deleting && !inFlight) {
    // Nothing booting any more: the rest of the plan is recorded left alone (the delete sequence, in chunks).
    next = enterStage('CANCELLING', 0, now, { cancelMode: 'record-remaining', cancelCursor: 0, window: nextWindow, counts });
  } else if (stopping && !inFlight && !decision.finished) {
    // Nothing in flight any more: the cleanup closes the session STOPPED; a resume carries the window on.
    next = enterStage('CLEANUP', 0, now, { stop: { stage: 'ROLLING', step: 0 }, window: nextWindow, counts });
    messages.push('Window stopped: nothing in flight; the nodes not started are left as they were');
  } else if (decision.finished) {
    const reasons = new Map(decision.leftAlone.map(({ op, reason }) => [opNode(op), reason]));
    for (const record of input.outsideTodo ?? []) if (decision.leftAloneOutside !== undefined) reasons.set(record.name, decision.leftAloneOutside);
    for (const [name, reason] of reasons) {
      const { op: _op, phase: _phase, ...rest } = current(name);
      put({ ...rest, status: 'NOT_STARTED', reason: `left alone: ${reason}` });
    }
    next = enterStage('CLEANUP', 0, now, { window: { ...nextWindow, finishedAt: now }, counts });
    messages.push(state.halted ? `Window finished halted: ${state.halted.reason}` : 'Window: every node of the plan is done');
  }
  if (changed.size > 0) actions.push({ type: 'recordNodes', records: [...changed.values()] });
  if (toCheck.length > 0 && command) actions.push(startChecks(toCheck, command, now));
  // Index entries that had left flight (settled) or were bare intents (dropped) give back the lock taken for them.
  actions.push(...boots, ...releaseLocks([...release, ...view.settled.filter((r) => r.phase !== 'LOCK_LOST').map((r) => r.name), ...names(view.dropped)].map((name) => ({ name }))));

  const moved = decision.start.length + decision.admit.length + release.length + toBoot.length + view.settled.length + view.dropped.length > 0;
  const recheck = decision.recheckAt !== undefined ? Math.max(1, Math.ceil((decision.recheckAt - now) / 1000)) : Infinity;
  const waitSeconds = next.stage !== 'ROLLING' || moved ? 0 : Math.min(session.pollIntervalSeconds, recheck);
  // Only the operator can move it now (nothing in flight to watch): park on a task token rather than poll.
  const operatorOnly = (decision.wait?.kind === 'approval' || decision.wait?.kind === 'paused') && !inFlight && !moved && !deleting && next.stage === 'ROLLING';
  return { progress: next, waitSeconds, ...(operatorOnly ? { waitForOperator: true } : {}), actions, ...(messages.length > 0 ? { message: messages.join('\n') } : {}) };
}
