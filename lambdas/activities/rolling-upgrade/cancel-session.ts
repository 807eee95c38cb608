import { cancelChunk, decideCancel } from '../../../core/rolling-upgrade/cancel-decisions';
import { activeNodes } from '../../../core/rolling-upgrade/stage-decision';
import { applyDecision } from './apply-decision';
import { loadPlanNodes, loadStepNodes, observeWlm } from './observe';
import type { ActivityBody } from './activity-runner';

/** CANCELLING: observe the step's nodes (resume-step) or the next chunk of the plan (fail-remaining) (core: decideCancel). */
export const cancelSession: ActivityBody = async ({ session, progress, deps, now }) => {
  const chunk = cancelChunk(session, progress, deps.settings.cancelChunkSize);
  const records =
    progress.cancelMode === 'resume-step'
      ? await loadStepNodes(deps, session, progress.step)
      : await loadPlanNodes(deps, session, chunk.from, chunk.to);
  const nodes = activeNodes(records);
  const wlm = await observeWlm(deps, nodes);
  return applyDecision(deps, session, decideCancel({ session, progress, nodes, observed: { wlm, chunk }, now }), nodes);
};
