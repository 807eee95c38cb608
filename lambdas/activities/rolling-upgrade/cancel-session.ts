import { cancelChunk, decideCancel } from '../../../core/rolling-upgrade/cancel-decisions';
import { activeNodes, decideLocksLost } from '../../../core/rolling-upgrade/stage-decision';
import type { NodeRecord, UpgradeSession } from '../../../core/rolling-upgrade/session';
import { applyDecision } from './apply-decision';
import { lockLeaseSeconds, type RollingUpgradeDependencies } from './dependencies';
import { loadPlanNodes, loadStepNodes, observeWlm } from './observe';
import type { ActivityBody } from './activity-runner';

/**
 * CANCELLING: observe the step's nodes (resume-step) or the next chunk of the plan (fail-remaining)
 * (core: decideCancel). A session acts only on nodes it holds: it locks the chunk first, and the
 * nodes another session holds (one it was waiting for, say) are left alone, with a message.
 */
export const cancelSession: ActivityBody = async ({ session, progress, deps, now }) => {
  const chunk = cancelChunk(session, progress, deps.settings.cancelChunkSize);
  const records =
    progress.cancelMode === 'resume-step'
      ? await loadStepNodes(deps, session, progress.step)
      : await loadPlanNodes(deps, session, chunk.from, chunk.to);
  const active = activeNodes(records);
  const { nodes, heldByOthers } = await lockForCancel(deps, session, active);
  const wlm = await observeWlm(deps, nodes);
  const decision = decideCancel({ session, progress, nodes, observed: { wlm, chunk }, now });
  const others = decideLocksLost(progress.step, active, heldByOthers);
  if (!others) return applyDecision(deps, session, decision, nodes);
  const message = [others.message, decision.message].filter((m) => m !== undefined).join('; ');
  return applyDecision(deps, session, { ...decision, actions: [...others.actions, ...decision.actions], message }, nodes);
};

/** Takes the locks of the nodes to cancel (keeping those it holds); returns the ones it holds, with their tokens, and the others' holders. */
async function lockForCancel(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  nodes: readonly NodeRecord[],
): Promise<{ nodes: NodeRecord[]; heldByOthers: Map<string, string> }> {
  if (nodes.length === 0) return { nodes: [], heldByOthers: new Map() };
  const heldByOthers = await deps.store.tryLockNodes(session.upgradeId, nodes.map((n) => n.name), lockLeaseSeconds(deps.settings, session));
  const ours = nodes.filter((n) => !heldByOthers.has(n.name));
  const locks = await deps.store.getNodeLocks(ours.map((n) => n.name));
  return {
    nodes: ours.map((n) => ({ ...n, ...(locks.get(n.name)?.owner === session.upgradeId ? { lockToken: locks.get(n.name)!.fencingToken } : {}) })),
    heldByOthers,
  };
}
