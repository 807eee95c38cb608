import { decideReturnToService } from '../../../core/rolling-upgrade/step-decisions';
import { activeNodes } from '../../../core/rolling-upgrade/stage-decision';
import { performDecision } from './perform-decision';
import { loadStepNodes, observeWlm } from './observe';
import { observeHealthChecks } from './health-checks';
import type { StageIncrement } from './activity-runner';

/** WLM_WAITING: observe the step's nodes in the workload manager and their health checks (core: decideReturnToService). */
export const checkReturnToService: StageIncrement = async ({ session, progress, deps, now, locks }) => {
  const nodes = activeNodes(await loadStepNodes(deps, session, progress.step));
  const [wlm, checks] = await Promise.all([observeWlm(deps, session, nodes, progress.bootRequestedAt), observeHealthChecks(deps, nodes)]);
  return performDecision(deps, session, decideReturnToService({ session, progress, nodes, observed: { wlm, checks }, now }), nodes, locks.renewedAt);
};
