/** What the activities read before they decide: the step's nodes and their records, the workload manager's view, the locks. */
import type { NodeRecord, UpgradeSession } from '../../../core/rolling-upgrade/session';
import { stepRange } from '../../../core/rolling-upgrade/step-plan';
import type { WlmNode } from '../../../core/site/site-nodes';
import type { RollingUpgradeDependencies } from './dependencies';

/** The nodes of `step` with their records, from the plan snapshot (never the live group). */
export async function loadStepNodes(deps: RollingUpgradeDependencies, session: UpgradeSession, step: number): Promise<NodeRecord[]> {
  const { start, end } = stepRange(step, session.upgradeStepSize, session.nodeCount);
  return loadPlanNodes(deps, session, start, end);
}

export async function loadPlanNodes(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  start: number,
  end: number,
): Promise<NodeRecord[]> {
  if (end <= start) return [];
  const names = await deps.store.getPlanSlice(session.upgradeId, start, end);
  return deps.store.getNodes(session.upgradeId, names.map((name, i) => ({ name, index: start + i })));
}

/** The nodes as the workload manager reports them (no call for no nodes). */
export async function observeWlm(deps: RollingUpgradeDependencies, nodes: readonly NodeRecord[]): Promise<Map<string, WlmNode>> {
  return nodes.length === 0 ? new Map() : deps.site.workloadManager.getNodes(nodes.map((n) => n.name));
}

/**
 * Locks every node for the session, or none: when another session holds some, the ones taken are
 * given back at once (so two sessions never deadlock). Returns the nodes held by others, with their owner.
 */
export async function lockAllOrNone(deps: RollingUpgradeDependencies, owner: string, nodes: readonly NodeRecord[]): Promise<Map<string, string>> {
  if (nodes.length === 0) return new Map();
  const names = nodes.map((n) => n.name);
  const heldByOthers = await deps.store.tryLockNodes(owner, names);
  if (heldByOthers.size > 0) await deps.store.releaseNodeLocks(owner, names.filter((n) => !heldByOthers.has(n)));
  return heldByOthers;
}
