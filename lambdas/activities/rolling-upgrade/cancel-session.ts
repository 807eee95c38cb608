import { FailureReason, type NodeRecord } from '../../../core/rolling-upgrade/session';
import { stepRange } from '../../../core/rolling-upgrade/step-plan';
import { activeNodes, failNodes, loadPlanNodes, loadStepNodes, undrainNodes } from './node-actions';
import { enterStage, type StageBody } from './stage-runner';

/**
 * CANCELLING: CRUS's delete sequence. Before booting in step 0 the step's nodes are resumed and
 * nothing fails; otherwise every node from the current step to the end of the plan that has not
 * completed is failed with `upgrade-session-deleted-before-completion`, a bounded chunk per increment.
 */
export const cancelSession: StageBody = async ({ session, progress, deps, now }) => {
  const cleanup = enterStage('CLEANUP', progress.step, now);
  if (progress.cancelMode === 'resume-step') {
    const nodes = activeNodes(await loadStepNodes(deps, session, progress.step));
    const names = nodes.map((n) => n.name);
    await undrainNodes(deps, names);
    await deps.store.putNodes(
      session.upgradeId,
      nodes.map((n): NodeRecord => ({ name: n.name, index: n.index, status: 'NOT_STARTED' })),
    );
    await deps.store.releaseNodeLocks(session.upgradeId, names);
    return { progress: cleanup, waitSeconds: 0, message: `Cancelled before booting step 0: ${nodes.length} node(s) resumed, none failed` };
  }

  const from = progress.cancelCursor ?? stepRange(progress.step, session.upgradeStepSize, session.nodeCount).start;
  const to = Math.min(from + deps.settings.cancelChunkSize, session.nodeCount);
  const remaining = activeNodes(await loadPlanNodes(deps, session, from, to));
  await failNodes(deps, session, remaining, FailureReason.sessionDeleted);
  const message = remaining.length > 0 ? `Cancelled: ${remaining.length} node(s) at plan positions ${from}-${to - 1} failed` : undefined;
  if (to >= session.nodeCount) return { progress: cleanup, waitSeconds: 0, ...(message ? { message } : {}) };
  return { progress: { ...progress, cancelCursor: to }, waitSeconds: 0, ...(message ? { message } : {}) };
};
