import { decideCleanUp } from '../../../core/rolling-upgrade/cancel-decisions';
import { GroupNotFoundError } from '../../../core/errors';
import { performDecision } from './perform-decision';
import { releaseSlots } from './slot-reservations';
import { loadStepNodes } from './observe';
import type { StageIncrement } from './activity-runner';

/** CLEANUP: observe the upgrading group and the step whose locks may remain (core: decideCleanUp). */
export const cleanUp: StageIncrement = async ({ session, progress, deps, now, locks }) => {
  // A missing upgrading group has nothing to empty: a cleanup must not loop on it.
  const upgradingMembers = await deps.site.inventory.getGroupMembers(session.upgradingLabel).catch((err: unknown) => {
    if (err instanceof GroupNotFoundError) return [];
    throw err;
  });
  const nodes = session.planTaken && progress.step < session.stepCount ? await loadStepNodes(deps, session, progress.step) : [];
  await releaseSlots(deps, session);
  return performDecision(deps, session, decideCleanUp({ session, progress, nodes, observed: { upgradingMembers }, now }), nodes, locks.renewedAt);
};
