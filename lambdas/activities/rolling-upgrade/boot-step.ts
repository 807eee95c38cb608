import { decideBootStep } from '../../../core/rolling-upgrade/step-decisions';
import { activeNodes } from '../../../core/rolling-upgrade/stage-decision';
import { applyDecision } from './apply-decision';
import { loadStepNodes } from './observe';
import type { ActivityBody } from './activity-runner';

export { bootSessionName } from '../../../core/rolling-upgrade/step-decisions';

/** QUIESCED: observe the upgrading group, then boot the step (core: decideBootStep; the boot time is saved before the boot). */
export const bootStep: ActivityBody = async ({ session, progress, deps, now }) => {
  const nodes = activeNodes(await loadStepNodes(deps, session, progress.step));
  const upgradingMembers = nodes.length > 0 ? await deps.site.inventory.getGroupMembers(session.upgradingLabel) : [];
  return applyDecision(deps, session, decideBootStep({ session, progress, nodes, observed: { upgradingMembers }, now }), nodes);
};
