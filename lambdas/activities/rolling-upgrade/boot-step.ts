import { decideBootStep } from '../../../core/rolling-upgrade/step-decisions';
import { activeNodes } from '../../../core/rolling-upgrade/stage-decision';
import { performDecision } from './perform-decision';
import { loadStepNodes, observeWlm } from './observe';
import type { StageIncrement } from './activity-runner';

export { bootSessionName } from '../../../core/rolling-upgrade/step-decisions';

/**
 * QUIESCED: observe the upgrading group, then boot the step (core: decideBootStep; the boot time is
 * saved before the boot). Right before the first boot attempt the site's claims are read once more: a
 * node another control plane's run drained since (their claim replaced ours) is left alone, not booted.
 */
export const bootStep: StageIncrement = async ({ session, progress, deps, now, locks }) => {
  const nodes = activeNodes(await loadStepNodes(deps, session, progress.step));
  if (nodes.length > 0 && progress.bootRequestedAt === undefined) await observeWlm(deps, session, nodes);
  const upgradingMembers = nodes.length > 0 ? await deps.site.inventory.getGroupMembers(session.upgradingLabel) : [];
  return performDecision(deps, session, decideBootStep({ session, progress, nodes, observed: { upgradingMembers }, now }), nodes, locks.renewedAt);
};
