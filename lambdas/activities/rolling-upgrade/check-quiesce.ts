import { decideQuiesce } from '../../../core/rolling-upgrade/step-decisions';
import { activeNodes } from '../../../core/rolling-upgrade/stage-decision';
import { performDecision } from './perform-decision';
import { loadStepNodes, observeWlm } from './observe';
import type { StageIncrement } from './activity-runner';

/** QUIESCING: observe the step's nodes in the workload manager (core: decideQuiesce). */
export const checkQuiesce: StageIncrement = async ({ session, progress, deps, now, locks }) => {
  const nodes = activeNodes(await loadStepNodes(deps, session, progress.step));
  const wlm = await observeWlm(deps, session, nodes);
  return performDecision(deps, session, decideQuiesce({ session, progress, nodes, observed: { wlm }, now }), nodes, locks.renewedAt);
};
