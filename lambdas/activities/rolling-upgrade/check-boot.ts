import { decideCheckBoot } from '../../../core/rolling-upgrade/step-decisions';
import { applyDecision } from './apply-decision';
import type { ActivityBody } from './activity-runner';

/** BOOTING: observe the boot session (core: decideCheckBoot). */
export const checkBoot: ActivityBody = async ({ session, progress, deps, now }) => {
  const boot = await deps.site.bootService.getSession(progress.bootSessionName!);
  return applyDecision(deps, session, decideCheckBoot({ session, progress, nodes: [], observed: { boot }, now }));
};
