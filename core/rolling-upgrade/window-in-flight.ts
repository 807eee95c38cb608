import type { Operation, OperationOutcome } from '../scheduling';
import type { BootSessionStatus, WlmNode } from '../site/site-nodes';
import { FailureReason, type NodeRecord, type UpgradeSession } from './session';
import { isDrained, isOurDrain } from './stage-decision';
import { isQuiet } from './wlm-readiness';
import { checkTimesOutAt, returnVerdict, type HealthCheckResult } from './health-check';

/**
 * Mode window, the nodes in flight: each moves through its own phase in an increment (DRAINING ->
 * QUIESCED -> BOOTING -> BOOTED [-> CHECKING] -> DONE), with lock-step's timeouts and reasons. Pure:
 * each phase says what the node does (InFlightStep); advanceInFlight gathers them for decideWindow
 * (core/rolling-upgrade/window-decisions.ts), which applies them.
 */

/**
 * What an increment's phases read of the nodes in the view: each record as the increment has it so far
 * (the view's, with the earlier phases' writes over it).
 */
export type RecordsNow = ReadonlyMap<string, NodeRecord>;

export interface PutBack {
  /** Recorded NOT_STARTED, as if never started (op, phase, boot, check, reason, lock token and phase times dropped). */
  records: NodeRecord[];
  /** Our drain, lifted; an admin's drain is left alone. */
  resume: string[];
}

/**
 * Phase "put back": nodes drained ahead and released (gated, no free slot when due), or not rebooted
 * yet when the run stops or is deleted, go back to TODO: our drain lifted, the lock given back.
 */
export function decidePutBack(nodes: readonly string[], records: RecordsNow, wlm: ReadonlyMap<string, WlmNode>): PutBack {
  return {
    records: nodes.map((name) => {
      const { op: _op, phase: _phase, boot: _boot, check: _check, reason: _reason, lockToken: _token, phaseTimes: _times, ...rest } = records.get(name)!;
      return { ...rest, status: 'NOT_STARTED' };
    }),
    resume: nodes.filter((name) => isOurDrain(wlm.get(name))),
  };
}

/** What one node in flight does in this increment. */
export type InFlightStep =
  | { kind: 'wait' }
  /** Back to TODO, drain lifted (the run stops or is deleted before its reboot). */
  | { kind: 'put-back' }
  /** Quiet, with a slot: rebooted now. */
  | { kind: 'boot' }
  /** The boot service does not know its boot session, or its start failed: started again for the nodes recorded in it. */
  | { kind: 'restart-boot'; bootSession: string }
  | { kind: 'booted' }
  /** Back in Slurm: its health check command starts (or starts again). */
  | { kind: 'check' }
  /** Back in service: upgraded. */
  | { kind: 'back' }
  /** Failed with a reason (a health check's with its detail). */
  | { kind: 'fail'; reason: string; detail?: string };

const WAIT: InFlightStep = { kind: 'wait' };

export interface NodePhaseInput {
  session: Pick<UpgradeSession, 'quiesceTimeoutSeconds' | 'bootTimeoutSeconds' | 'wlmReturnTimeoutSeconds' | 'healthCheck'>;
  record: NodeRecord;
  now: number;
}

/**
 * Phase DRAINING / QUIESCED: a node with a slot boots once quiet, or fails when it is not quiet
 * within quiesceTimeoutSeconds of its start. A node drained ahead (no slot) waits for its admission,
 * and times out only while its drain has not taken (DRAINING). A node recorded DRAINING that is not
 * drained (the increment that recorded it died before its drain) is drained again.
 */
export function decideQuiescing({ session, record, op, wlm, now }: NodePhaseInput & { op: Operation; wlm: WlmNode | undefined }): {
  drainAgain: boolean;
  step: InFlightStep;
} {
  const drainAgain = record.phase === 'DRAINING' && wlm !== undefined && !isDrained(wlm);
  const timedOut = now - (op.startedAt ?? now) >= session.quiesceTimeoutSeconds * 1000;
  const timeout: InFlightStep = { kind: 'fail', reason: FailureReason.quiesceTimeout };
  if (!op.holdsSlot) return { drainAgain, step: record.phase === 'DRAINING' && timedOut ? timeout : WAIT };
  if (record.phase === 'QUIESCED' || (wlm !== undefined && isQuiet(wlm))) return { drainAgain, step: { kind: 'boot' } };
  return { drainAgain, step: timedOut ? timeout : WAIT };
}

/**
 * Phase BOOTING: booted when its boot session says so; failed when the session failed or completed
 * without it, or when bootTimeoutSeconds passed since the boot was requested (or last asked again).
 * A boot session the boot service does not know, or whose start failed (startError: the request
 * that starts it failed, e.g. its command's transport), is started again and never times out: a
 * boot that never started is the run's error (said as the increment fails), not the node's failure.
 */
export function decideBooting({
  session,
  record,
  boot,
  now,
}: NodePhaseInput & { record: { boot: NonNullable<NodeRecord['boot']> }; boot: BootSessionStatus | undefined }): InFlightStep {
  if (!boot || (boot.startError !== undefined && boot.status !== 'complete')) return { kind: 'restart-boot', bootSession: record.boot.session };
  const outcome = boot.error ? 'failed' : boot.nodes[record.name];
  if (outcome === 'succeeded') return { kind: 'booted' };
  if (boot.status === 'complete' || outcome === 'failed') return { kind: 'fail', reason: FailureReason.bootFailed };
  if (now - (record.boot.retriedAt ?? record.boot.requestedAt) >= session.bootTimeoutSeconds * 1000) return { kind: 'fail', reason: FailureReason.bootTimeout };
  return WAIT;
}

/**
 * Phase BOOTED / CHECKING (core/rolling-upgrade/health-check.ts returnVerdict): back in service, a
 * health check to start, a failed check, or a wait; a node not back in Slurm within
 * wlmReturnTimeoutSeconds of its boot's end fails (a running health check has its own timeout).
 */
export function decideReturning({
  session,
  record,
  wlm,
  check,
  now,
}: NodePhaseInput & { record: { boot: NonNullable<NodeRecord['boot']> }; wlm: WlmNode | undefined; check: HealthCheckResult | undefined }): InFlightStep {
  const verdict = returnVerdict(session, record, wlm, record.boot.requestedAt, check, now);
  if (verdict.kind === 'back' || verdict.kind === 'check') return { kind: verdict.kind };
  if (verdict.kind === 'failed') return { kind: 'fail', reason: verdict.reason, detail: verdict.detail };
  const bootEnded = record.boot.finishedAt ?? record.boot.requestedAt;
  return !verdict.checking && now - bootEnded >= session.wlmReturnTimeoutSeconds * 1000 ? { kind: 'fail', reason: FailureReason.wlmTimeout } : WAIT;
}

/**
 * When the first node in flight would time out in its phase (epoch ms; undefined: none can), its health check's
 * own timeout included, and whether a health check is in flight (it ends on the site's command transport, not in
 * Slurm: such a wait parks only where the transport notifies a command's end). A wait resumed by the site's events
 * must not outlast the deadline (issue 29): the timeouts hold as they do polled.
 */
export function inFlightDeadline(
  session: NodePhaseInput['session'],
  inFlight: readonly NodeRecord[],
): { deadline?: number; checking: boolean; afterBoot: boolean; quiesce: boolean } {
  let deadline = Infinity;
  let checking = false;
  let afterBoot = false;
  let quiesce = false;
  for (const record of inFlight) {
    const { phase, boot, op } = record;
    if (phase === 'DRAINING' || phase === 'QUIESCED') {
      quiesce = true;
      if (op?.startedAt !== undefined) deadline = Math.min(deadline, op.startedAt + session.quiesceTimeoutSeconds * 1000);
    } else if (phase === 'BOOTING' && boot) {
      afterBoot = true;
      deadline = Math.min(deadline, (boot.retriedAt ?? boot.requestedAt) + session.bootTimeoutSeconds * 1000);
    } else if (phase === 'BOOTED' && boot) {
      afterBoot = true;
      deadline = Math.min(deadline, (boot.finishedAt ?? boot.requestedAt) + session.wlmReturnTimeoutSeconds * 1000);
    } else if (phase === 'CHECKING') {
      checking = true;
      deadline = Math.min(deadline, checkTimesOutAt(session, record) ?? Infinity);
    }
  }
  return { ...(Number.isFinite(deadline) ? { deadline } : {}), checking, afterBoot, quiesce };
}

/** One node in flight, by its phase; a stopping or deleted run puts back every node not rebooted yet. */
export function decideInFlightNode({
  session,
  record,
  op,
  observed,
  now,
}: NodePhaseInput & { session: Pick<UpgradeSession, 'state'>; op: Operation; observed: InFlightObserved }): { drainAgain: boolean; step: InFlightStep } {
  const wlm = observed.wlm.get(record.name);
  const { phase, boot } = record;
  if (phase === 'DRAINING' || phase === 'QUIESCED') {
    if (session.state === 'DELETING' || session.state === 'STOPPING') return { drainAgain: false, step: { kind: 'put-back' } };
    return decideQuiescing({ session, record, op, wlm, now });
  }
  if (phase === 'BOOTING' && boot)
    return { drainAgain: false, step: decideBooting({ session, record: { ...record, boot }, boot: observed.boots.get(boot.session), now }) };
  if ((phase === 'BOOTED' || phase === 'CHECKING') && boot) {
    return { drainAgain: false, step: decideReturning({ session, record: { ...record, boot }, wlm, check: observed.checks?.get(record.name), now }) };
  }
  return { drainAgain: false, step: WAIT };
}

/** What the nodes in flight are seen as (a part of the increment's WindowObserved). */
export interface InFlightObserved {
  wlm: ReadonlyMap<string, WlmNode>;
  boots: ReadonlyMap<string, BootSessionStatus | undefined>;
  checks?: ReadonlyMap<string, HealthCheckResult>;
}

export interface InFlightInput {
  session: NodePhaseInput['session'] & Pick<UpgradeSession, 'state'>;
  /** The index's records in flight (as read), and the nodes started in this increment (they move next time). */
  inFlight: readonly NodeRecord[];
  startedNow: ReadonlySet<string>;
  ops: ReadonlyMap<string, Operation>;
  records: RecordsNow;
  observed: InFlightObserved;
  now: number;
}

/** Every node in flight after its phase, gathered (each list in the in-flight index's order). */
export interface InFlightAdvance {
  /** Records written: put back (NOT_STARTED) and BOOTED. */
  writes: NodeRecord[];
  /** Ops back to TODO (put back). */
  putBack: string[];
  /** Ops that ended, and how. */
  outcomes: [string, OperationOutcome][];
  /** Nodes whose lock is given back: put back or ended. */
  released: string[];
  drain: string[];
  resume: string[];
  toBoot: string[];
  toCheck: NodeRecord[];
  /** Upgraded: their drain is lifted (an admin's kept, with its reason as set). */
  back: string[];
  unhealthy: { name: string; detail: string }[];
  /** Boot sessions the boot service does not know, with the nodes recorded in them. */
  restartBoots: Map<string, string[]>;
}

/** Phase "advance in flight": each node in flight moves through its own phase (an op released now, or started now, does not). */
export function advanceInFlight({ session, inFlight, startedNow, ops, records, observed, now }: InFlightInput): InFlightAdvance {
  const advance: InFlightAdvance = {
    writes: [],
    putBack: [],
    outcomes: [],
    released: [],
    drain: [],
    resume: [],
    toBoot: [],
    toCheck: [],
    back: [],
    unhealthy: [],
    restartBoots: new Map(),
  };
  for (const record of inFlight) {
    const op = ops.get(record.name)!;
    if (op.state !== 'TRANSITION' || startedNow.has(record.name)) continue;
    const { drainAgain, step } = decideInFlightNode({ session, record, op, observed, now });
    const name = record.name;
    if (drainAgain) advance.drain.push(name);
    switch (step.kind) {
      case 'put-back': {
        const putBack = decidePutBack([name], records, observed.wlm);
        advance.writes.push(...putBack.records);
        advance.resume.push(...putBack.resume);
        advance.putBack.push(name);
        advance.released.push(name);
        break;
      }
      case 'boot':
        advance.toBoot.push(name);
        break;
      case 'restart-boot':
        advance.restartBoots.set(step.bootSession, [...(advance.restartBoots.get(step.bootSession) ?? []), name]);
        break;
      case 'booted':
        advance.writes.push({ ...records.get(name)!, phase: 'BOOTED', boot: { ...record.boot!, finishedAt: now } });
        break;
      case 'check':
        advance.toCheck.push(records.get(name)!);
        break;
      case 'back':
        advance.back.push(name);
        advance.outcomes.push([name, { ok: true }]);
        advance.released.push(name);
        break;
      case 'fail':
        if (step.detail !== undefined) advance.unhealthy.push({ name, detail: step.detail });
        advance.outcomes.push([name, { ok: false, error: step.reason }]);
        advance.released.push(name);
        break;
      case 'wait':
        break;
    }
  }
  return advance;
}
