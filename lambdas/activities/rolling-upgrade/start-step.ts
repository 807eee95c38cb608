import { shortList } from '../../../core/text';
import { UnknownNodesError } from '../../../core/errors';
import { stepCount } from '../../../core/rolling-upgrade/step-plan';
import type { NodeRecord } from '../../../core/rolling-upgrade/session';
import { activeNodes, drainNodes, loadStepNodes } from './node-actions';
import { enterStage, type StageBody } from './stage-runner';

/**
 * STARTING: at step 0 take the plan snapshot and empty the failed group; then lock the step's
 * nodes (all or none, so two sessions never work on one node and cannot deadlock) and drain them.
 */
export const startStep: StageBody = async ({ session, progress, deps, now }) => {
  const { store, site } = deps;
  let current = session;
  if (!current.planTaken) {
    const plan = await site.inventory.getGroupMembers(current.startingLabel);
    await store.savePlan(current.upgradeId, plan);
    current = { ...current, planTaken: true, nodeCount: plan.length, stepCount: stepCount(plan.length, current.upgradeStepSize) };
  }
  if (progress.step === 0) {
    const failed = await site.inventory.getGroupMembers(current.failedLabel);
    if (failed.length > 0) await site.inventory.removeGroupMembers(current.failedLabel, failed);
  }
  if (progress.step >= current.stepCount) {
    return { progress: enterStage('CLEANUP', progress.step, now), waitSeconds: 0, message: 'No nodes left to upgrade' };
  }

  const nodes = activeNodes(await loadStepNodes(deps, current, progress.step));
  if (nodes.length === 0) return nextStep(progress.step, now);
  const names = nodes.map((n) => n.name);
  const heldByOthers = await store.tryLockNodes(current.upgradeId, names);
  if (heldByOthers.size > 0) {
    // Nothing has been done to these nodes yet: give back what we took and wait our turn.
    const taken = names.filter((n) => !heldByOthers.has(n));
    await store.releaseNodeLocks(current.upgradeId, taken);
    if (progress.lockWaitSince !== undefined) return { progress, waitSeconds: current.pollIntervalSeconds };
    const owners = [...new Set(heldByOthers.values())].join(', ');
    return {
      progress: { ...progress, lockWaitSince: now },
      waitSeconds: current.pollIntervalSeconds,
      message: `Step ${progress.step} waits for nodes locked by session ${owners}: ${shortList([...heldByOthers.keys()])}`,
    };
  }

  const inWlm = await site.workloadManager.getNodes(names);
  const unknown = nodes.filter((n) => !inWlm.has(n.name));
  if (unknown.length > 0) {
    throw new UnknownNodesError('workload-manager', unknown.map((n) => n.name));
  }
  await drainNodes(deps, names);
  await store.putNodes(
    current.upgradeId,
    nodes.map((n): NodeRecord => ({ name: n.name, index: n.index, status: 'IN_PROGRESS', phase: 'DRAINING' })),
  );
  return {
    progress: enterStage('QUIESCING', progress.step, now),
    waitSeconds: 0,
    message: `Step ${progress.step} of ${current.stepCount}: draining ${nodes.length} node(s): ${shortList(names)}`,
  };
};

export function nextStep(step: number, now: number) {
  return { progress: enterStage('STARTING', step + 1, now), waitSeconds: 0 };
}
