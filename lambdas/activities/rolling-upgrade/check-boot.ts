import { SiteServiceError } from '../../../core/errors';
import { enterStage, type StageBody } from './stage-runner';

/** BOOTING: wait for the boot session to report every node, or for the boot timeout. */
export const checkBoot: StageBody = async ({ session, progress, deps, now }) => {
  const boot = await deps.site.bootService.getSession(progress.bootSessionName!);
  if (!boot) throw new SiteServiceError('boot-service', `boot session ${progress.bootSessionName} is not known to the boot service`);
  const timedOut = now - progress.stageStartedAt >= session.bootTimeoutSeconds * 1000;
  if (boot.status !== 'complete' && !timedOut) return { progress, waitSeconds: session.pollIntervalSeconds };
  return {
    progress: enterStage('BOOTED', progress.step, now, {
      bootRequestedAt: progress.bootRequestedAt!,
      bootSessionName: progress.bootSessionName!,
      bootFinishedAt: now,
    }),
    waitSeconds: 0,
    message:
      boot.status === 'complete'
        ? `Step ${progress.step}: boot session ${boot.name} complete`
        : `Step ${progress.step}: boot session ${boot.name} did not finish within ${session.bootTimeoutSeconds} s`,
  };
};
