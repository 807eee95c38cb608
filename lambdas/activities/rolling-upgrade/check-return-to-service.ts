import { shortList } from '../../../core/text';
import { isBackAfterBoot } from '../../../core/rolling-upgrade/wlm-readiness';
import { FailureReason, type NodeRecord } from '../../../core/rolling-upgrade/session';
import { activeNodes, failNodes, forEachConcurrently, loadStepNodes } from './node-actions';
import type { StageBody } from './stage-runner';
import { nextStep } from './start-step';

/**
 * WLM_WAITING: resume each node that is really back (rebooted, responding, idle) and count it
 * upgraded; past the return timeout fail the rest with `upgrading-time-out-wlm-waiting`.
 */
export const checkReturnToService: StageBody = async ({ session, progress, deps, now }) => {
  const nodes = activeNodes(await loadStepNodes(deps, session, progress.step));
  const wlm = await deps.site.workloadManager.getNodes(nodes.map((n) => n.name));
  const back = nodes.filter((n) => {
    const state = wlm.get(n.name);
    return state !== undefined && isBackAfterBoot(state, progress.bootRequestedAt!);
  });
  await forEachConcurrently(deps, back, async (node) => {
    if (wlm.get(node.name)?.flags.includes('DRAIN')) await deps.site.workloadManager.resume(node.name);
  });
  await deps.store.putNodes(
    session.upgradeId,
    back.map((n): NodeRecord => ({ name: n.name, index: n.index, status: 'UPGRADED', phase: 'DONE' })),
  );
  await deps.store.releaseNodeLocks(session.upgradeId, back.map((n) => n.name));

  const backNames = new Set(back.map((n) => n.name));
  const waiting = nodes.filter((n) => !backNames.has(n.name));
  const backMessage = back.length > 0 ? `Step ${progress.step}: ${back.length} node(s) back in service: ${shortList(back.map((n) => n.name))}` : undefined;
  if (waiting.length === 0) return { ...nextStep(progress.step, now), ...(backMessage ? { message: backMessage } : {}) };

  const since = progress.bootFinishedAt ?? progress.stageStartedAt;
  if (now - since < session.wlmReturnTimeoutSeconds * 1000) {
    return { progress, waitSeconds: session.pollIntervalSeconds, ...(backMessage ? { message: backMessage } : {}) };
  }
  await failNodes(deps, session, waiting, FailureReason.wlmTimeout);
  return {
    ...nextStep(progress.step, now),
    message:
      (backMessage ? `${backMessage}; ` : `Step ${progress.step}: `) +
      `${waiting.length} node(s) did not return within ${session.wlmReturnTimeoutSeconds} s: ${shortList(waiting.map((n) => n.name))}`,
  };
};
