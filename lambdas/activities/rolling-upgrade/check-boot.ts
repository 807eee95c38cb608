import { decideCheckBoot } from '../../../core/rolling-upgrade/step-decisions';
import { performDecision } from './perform-decision';
import type { StageIncrement } from './activity-runner';

/** BOOTING: observe the boot session (core: decideCheckBoot). */
export const checkBoot: StageIncrement = async ({ session, progress, deps, now }) => {
  const boot = await deps.site.bootService.getSession(progress.bootSessionName!);
  return performDecision(deps, session, decideCheckBoot({ session, progress, nodes: [], observed: { boot }, now }));
};
