import type { WlmNode } from '../site/site-nodes';
import { deletionOutcome } from './deletion-rules';
import { COMPLETED_MESSAGE, NOT_COMPLETED_MESSAGE, FailureReason, type Progress, type Stage, type UpgradeSession } from './session';
import { enterStage, failNodes, isOurDrain, names, recordNodes, releaseLocks, type StageDecision, type StageInput } from './stage-decision';
import { stepRange, stepText } from './step-plan';

/** The session was cancelled (state DELETING) while `stage` was due: switch to CRUS's delete sequence. */
export function decideCancelRequested(session: Pick<UpgradeSession, 'stepCount'>, stage: Stage, progress: Progress, now: number): StageDecision {
  const mode = deletionOutcome(progress.step, stage);
  return {
    progress: enterStage(mode === 'nothing' ? 'CLEANUP' : 'CANCELLING', progress.step, now, {
      ...(mode === 'nothing' ? {} : { cancelMode: mode }),
      ...(progress.bootSessionName ? { bootSessionName: progress.bootSessionName } : {}),
    }),
    waitSeconds: 0,
    actions: [],
    message: `Session deleted at ${stepText(progress.step, session.stepCount)} in stage ${stage}`,
  };
}

/** Whether a cancel seen at `stage` switches to the delete sequence (it is one already from CANCELLING on). */
export function cancelSwitchesAt(session: UpgradeSession, stage: Stage): boolean {
  // ROLLING (mode window) runs its own delete sequence: booting nodes finish before the rest is recorded failed.
  return session.state === 'DELETING' && stage !== 'ROLLING' && stage !== 'CANCELLING' && stage !== 'CLEANUP' && stage !== 'COMPLETE' && stage !== 'STOPPED';
}

/** The plan positions one CANCELLING increment fails: from the cursor (or the current step's start), a bounded chunk. */
export function cancelChunk(session: UpgradeSession, progress: Progress, chunkSize: number): { from: number; to: number } {
  const from = progress.cancelCursor ?? stepRange(progress.step, session.upgradeStepSize, session.nodeCount).start;
  return { from, to: Math.min(from + chunkSize, session.nodeCount) };
}

/**
 * CANCELLING: CRUS's delete sequence. Before booting in step 0 the step's nodes are resumed and
 * nothing fails (only our drain is lifted: a node an admin drained stays drained, with its reason);
 * otherwise every node from the current step to the end of the plan that has not completed is
 * failed with `upgrade-session-deleted-before-completion`, a bounded chunk per increment.
 * `nodes` are the step's active nodes (resume-step) or the chunk's (fail-remaining).
 */
export function decideCancel({
  session,
  progress,
  nodes,
  observed,
  now,
}: StageInput<{ wlm: ReadonlyMap<string, WlmNode>; chunk: { from: number; to: number } }>): StageDecision {
  // A stop's sequence carries where it resumes (and the counts) to the cleanup that closes it STOPPED.
  const cleanup = enterStage('CLEANUP', progress.step, now, progress.stop ? { stop: progress.stop } : {});
  if (progress.cancelMode === 'resume-step') {
    const ours = nodes.filter((n) => isOurDrain(observed.wlm.get(n.name)));
    return {
      progress: cleanup,
      waitSeconds: 0,
      actions: [
        ...(ours.length > 0 ? [{ type: 'resume' as const, nodes: names(ours) }] : []),
        ...recordNodes(nodes, { status: 'NOT_STARTED' }),
        ...releaseLocks(nodes),
      ],
      message:
        progress.stop && session.state !== 'DELETING'
          ? `Stopped before booting ${stepText(progress.step, session.stepCount)}: ${nodes.length} node(s) put back as they were (${ours.length} drain(s) of ours lifted), none failed`
          : `Cancelled before booting ${stepText(progress.step, session.stepCount)}: ${nodes.length} node(s) resumed, none failed`,
    };
  }
  const { from, to } = observed.chunk;
  // Mode window: the nodes never drained stay in service; the session records them failed.
  // Mode window: never touched, never failed: they stay NOT_STARTED (counted "not started"), the reason saying why.
  const window = progress.cancelMode === 'record-remaining';
  const actions = window
    ? [...recordNodes(nodes, { status: 'NOT_STARTED', reason: `left alone: ${FailureReason.sessionDeleted}` }), ...releaseLocks(nodes)]
    : failNodes(session, nodes, FailureReason.sessionDeleted, observed.wlm);
  const message =
    nodes.length === 0
      ? undefined
      : window
        ? `Cancelled: ${nodes.length} node(s) at plan positions ${from}-${to - 1} left alone, not started`
        : `Cancelled: ${nodes.length} node(s) at plan positions ${from}-${to - 1} failed`;
  const next = to >= session.nodeCount ? cleanup : { ...progress, cancelCursor: to };
  return { progress: next, waitSeconds: 0, actions, ...(message ? { message } : {}) };
}

/**
 * CLEANUP: empty the upgrading group, release what locks remain, and close the session: READY and
 * completed, or, for a cancelled one, DELETED (kept as a tombstone for audit where CRUS removed it),
 * or HALTED (mode window, failure budget exceeded: not completed).
 * `nodes` are the current step's nodes (none once the plan is done).
 */
export function decideCleanUp({ session, progress, nodes, observed, now }: StageInput<{ upgradingMembers: readonly string[] }>): StageDecision {
  const deleting = session.state === 'DELETING';
  const halted = progress.window?.halted ?? progress.halted;
  // A run that touched no node (every one left alone: not alive, unavailable, locked elsewhere) did not upgrade anything: not a success.
  const noneDone = !deleting && !halted && session.nodeCount > 0 && (progress.counts?.upgraded ?? 0) === 0 && (progress.counts?.failed ?? 0) === 0;
  const emptyUpgrading =
    observed.upgradingMembers.length > 0 ? [{ type: 'removeFromGroup' as const, label: session.upgradingLabel, nodes: [...observed.upgradingMembers] }] : [];
  if (progress.stop && !deleting) {
    // The stop was withdrawn (the session is UPDATING again): carry on where it would have resumed.
    if (session.state !== 'STOPPING') {
      const { stop, stage: _s, step: _p, stageStartedAt: _t, errorCount: _e, ...rest } = progress;
      return { progress: enterStage(stop.stage, stop.step, now, rest), waitSeconds: 0, actions: [], message: 'Stop withdrawn: the session carries on' };
    }
    const { stage: _s, stageStartedAt: _t, errorCount: _e, ...rest } = progress;
    return {
      progress: enterStage('STOPPED', progress.step, now, rest),
      waitSeconds: 0,
      actions: [...emptyUpgrading, ...releaseLocks(nodes), { type: 'closeSession', state: 'STOPPED', completed: false }],
      message: `Upgrade Session Stopped: nodes in flight finished, untouched nodes left as they were; carry it on with rollout session resume ${session.upgradeId}`,
    };
  }
  return {
    progress: enterStage('COMPLETE', progress.step, now, {
      ...(progress.window ? { window: progress.window } : {}),
      ...(progress.halted ? { halted: progress.halted } : {}),
    }),
    waitSeconds: 0,
    actions: [
      ...emptyUpgrading,
      ...releaseLocks(nodes),
      { type: 'closeSession', state: deleting ? 'DELETED' : halted ? 'HALTED' : 'READY', completed: !deleting && !halted && !noneDone },
    ],
    message: deleting
      ? 'Upgrade Session Deleted'
      : halted
        ? `Upgrade Session Halted: ${halted.reason}`
        : noneDone
          ? `${NOT_COMPLETED_MESSAGE}: none of its ${session.nodeCount} node(s) was upgraded or failed: every node was left alone (each node's reason says why)`
          : COMPLETED_MESSAGE,
  };
}

/**
 * What a cancel would do now by the deletion rules, for the operator to confirm: how many nodes it
 * fails that were never started (`untouched`), and how many of the step in flight (`inFlight`). The
 * window fails none (its untouched nodes are left alone, NOT_STARTED); a lock-step cancel before
 * booting step 0 fails none either.
 */
export function cancelImpact(
  session: Pick<UpgradeSession, 'mode' | 'state' | 'nodeCount' | 'upgradeStepSize' | 'planTaken'> & { progress: Pick<Progress, 'step' | 'stage' | 'stop'> },
): { untouched: number; inFlight: number } {
  const none = { untouched: 0, inFlight: 0 };
  if (session.mode === 'window' || !session.planTaken || !['UPDATING', 'STOPPING', 'STOPPED'].includes(session.state)) return none;
  const where = session.progress.stage === 'STOPPED' && session.progress.stop ? session.progress.stop : session.progress;
  if (deletionOutcome(where.step, where.stage) !== 'fail-remaining' || where.stage === 'CANCELLING') return none;
  const { start, end } = stepRange(where.step, session.upgradeStepSize, session.nodeCount);
  const started = where.stage !== 'STARTING';
  return { untouched: Math.max(0, session.nodeCount - (started ? end : start)), inFlight: started ? end - start : 0 };
}
