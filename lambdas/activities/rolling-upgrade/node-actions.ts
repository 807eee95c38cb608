import pLimit from 'p-limit';
import type { NodeAction, StageDecision, StageOutcome } from '../../../core/rolling-upgrade/stage-decision';
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

async function forEachConcurrently(deps: RollingUpgradeDependencies, items: readonly string[], action: (item: string) => Promise<void>): Promise<void> {
  const limit = pLimit(deps.settings.siteConcurrency);
  await Promise.all(items.map((item) => limit(() => action(item))));
}

/** Performs one action against the ports. Each is safe to repeat: a retried increment observes and decides again. */
async function apply(deps: RollingUpgradeDependencies, upgradeId: string, action: NodeAction): Promise<void> {
  const { site, store } = deps;
  switch (action.type) {
    case 'saveProgress':
      return store.saveProgress(upgradeId, action.expected, action.progress);
    case 'drain':
      return forEachConcurrently(deps, action.nodes, (name) => site.workloadManager.drain(name, action.reason));
    case 'resume':
      return forEachConcurrently(deps, action.nodes, (name) => site.workloadManager.resume(name));
    case 'fail':
      return forEachConcurrently(deps, action.nodes, (name) => site.workloadManager.fail(name, action.reason));
    case 'addToGroup':
      return site.inventory.addGroupMembers(action.label, action.nodes);
    case 'removeFromGroup':
      return site.inventory.removeGroupMembers(action.label, action.nodes);
    case 'startBoot':
      await site.bootService.createSession({ name: action.name, operation: 'reboot', templateName: action.template, limit: action.limit });
      return;
    case 'recordNodes':
      return store.putNodes(upgradeId, action.records);
    case 'releaseLocks':
      return store.releaseNodeLocks(upgradeId, action.nodes);
    case 'closeSession':
      return store.setState(upgradeId, action.state, action.completed);
  }
}

/** Performs a decision's actions in order, then fails the attempt if the decision says it cannot go on. */
export async function applyDecision(deps: RollingUpgradeDependencies, session: UpgradeSession, decision: StageDecision): Promise<StageOutcome> {
  for (const action of decision.actions) await apply(deps, session.upgradeId, action);
  if (decision.error) throw decision.error;
  const { progress, waitSeconds, message } = decision;
  return { progress, waitSeconds, ...(message !== undefined ? { message } : {}) };
}
