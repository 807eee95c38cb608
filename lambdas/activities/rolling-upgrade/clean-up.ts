import { COMPLETED_MESSAGE } from '../../../core/rolling-upgrade/session';
import { loadStepNodes } from './node-actions';
import { enterStage, type StageBody } from './stage-runner';

/**
 * CLEANUP: empty the upgrading group, release what locks remain, and close the session:
 * READY and completed, or, for a cancelled one, DELETED (kept as a tombstone for audit where
 * CRUS removed it).
 */
export const cleanUp: StageBody = async ({ session, progress, deps, now }) => {
  const { site, store } = deps;
  const members = await site.inventory.getGroupMembers(session.upgradingLabel);
  if (members.length > 0) await site.inventory.removeGroupMembers(session.upgradingLabel, members);
  if (session.planTaken && progress.step < session.stepCount) {
    const step = await loadStepNodes(deps, session, progress.step);
    await store.releaseNodeLocks(session.upgradeId, step.map((n) => n.name));
  }
  const deleting = session.state === 'DELETING';
  await store.setState(session.upgradeId, deleting ? 'DELETED' : 'READY', !deleting);
  return {
    progress: enterStage('COMPLETE', progress.step, now),
    waitSeconds: 0,
    message: deleting ? 'Upgrade Session Deleted' : COMPLETED_MESSAGE,
  };
};
