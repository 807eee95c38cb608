import { decideEvaluateBoot } from '../../../core/rolling-upgrade/step-decisions';
import { activeNodes } from '../../../core/rolling-upgrade/stage-decision';
import { performDecision } from './perform-decision';
import { loadStepNodes, observeWlm } from './observe';
import type { StageIncrement } from './activity-runner';

/** BOOTED: observe the boot session's per-node report and the nodes (core: decideEvaluateBoot). */
export const evaluateBoot: StageIncrement = async ({ session, progress, deps, now, locks }) => {
  const nodes = activeNodes(await loadStepNodes(deps, session, progress.step));
  const boot = await deps.site.bootService.getSession(progress.bootSessionName!);
  const wlm = boot ? await observeWlm(deps, session, nodes) : new Map();
  return performDecision(deps, session, decideEvaluateBoot({ session, progress, nodes, observed: { boot, wlm }, now }), nodes, locks.renewedAt);
};
