import { decideCleanUp } from '../../../core/rolling-upgrade/cancel-decisions';
import { applyDecision } from './apply-decision';
import { loadStepNodes } from './observe';
import type { ActivityBody } from './activity-runner';

/** CLEANUP: observe the upgrading group and the step whose locks may remain (core: decideCleanUp). */
export const cleanUp: ActivityBody = async ({ session, progress, deps, now }) => {
  const upgradingMembers = await deps.site.inventory.getGroupMembers(session.upgradingLabel);
  const nodes = session.planTaken && progress.step < session.stepCount ? await loadStepNodes(deps, session, progress.step) : [];
  return applyDecision(deps, session, decideCleanUp({ session, progress, nodes, observed: { upgradingMembers }, now }), nodes);
};
