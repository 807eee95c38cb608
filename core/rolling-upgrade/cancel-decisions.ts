import type { WlmNode } from '../site/site-nodes';
import { deletionOutcome } from './deletion-rules';
import { COMPLETED_MESSAGE, NOT_COMPLETED_MESSAGE, FailureReason, type Progress, type Stage, type UpgradeSession } from './session';
import { enterStage, failNodes, isOurDrain, names, recordNodes, releaseLocks, type StageDecision, type StageInput } from './stage-decision';
import { stepRange } from './step-plan';

/** The session was cancelled (state DELETING) while `stage` was due: switch to CRUS's delete sequence. */
export function decideCancelRequested(stage: Stage, progress: Progress, now: number): StageDecision {
  const mode = deletionOutcome(progress.step, stage);
  return {
    progress: enterStage(mode === 'nothing' ? 'CLEANUP' : 'CANCELLING', progress.step, now, {
      ...(mode === 'nothing' ? {} : { cancelMode: mode }),
      ...(progress.bootSessionName ? { bootSessionName: progress.bootSessionName } : {}),
    }),
    waitSeconds: 0,
    actions: [],
    message: `Session deleted at step ${progress.step} in stage ${stage}`,
  };
}

/** Whether a cancel seen at `stage` switches to the delete sequence (it is one already from CANCELLING on). */
export function cancelSwitchesAt(session: UpgradeSession, stage: Stage): boolean {
  // ROLLING (mode window) runs its own delete sequence: booting nodes finish before the rest is recorded failed.
  return session.state === 'DELETING' && stage !== 'ROLLING' && stage !== 'CANCELLING' && stage !== 'CLEANUP' && stage !== 'COMPLETE';
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
  const cleanup = enterStage('CLEANUP', progress.step, now);
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
      message: `Cancelled before booting step 0: ${nodes.length} node(s) resumed, none failed`,
    };
  }
  const { from, to } = observed.chunk;
  // Mode window: the nodes never drained stay in service; the session records them failed.
  const actions =
    progress.cancelMode === 'record-remaining'
      ? [...recordNodes(nodes, { status: 'FAILED', reason: FailureReason.sessionDeleted }), ...releaseLocks(nodes)]
      : failNodes(session, nodes, FailureReason.sessionDeleted, observed.wlm);
  const message = nodes.length > 0 ? `Cancelled: ${nodes.length} node(s) at plan positions ${from}-${to - 1} failed` : undefined;
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
  const halted = progress.window?.halted;
  // A run that touched no node (every one left alone: not alive, unavailable, locked elsewhere) did not upgrade anything: not a success.
  const noneDone = !deleting && !halted && session.nodeCount > 0 && (progress.counts?.upgraded ?? 0) === 0 && (progress.counts?.failed ?? 0) === 0;
  return {
    progress: enterStage('COMPLETE', progress.step, now, progress.window ? { window: progress.window } : {}),
    waitSeconds: 0,
    actions: [
      ...(observed.upgradingMembers.length > 0
        ? [{ type: 'removeFromGroup' as const, label: session.upgradingLabel, nodes: [...observed.upgradingMembers] }]
        : []),
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
