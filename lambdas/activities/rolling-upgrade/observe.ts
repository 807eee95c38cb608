/** What the activities read before they decide: the step's nodes and their records, the workload manager's view, the locks. */
import type { NodeRecord, UpgradeSession } from '../../../core/rolling-upgrade/session';
import { stepRange } from '../../../core/rolling-upgrade/step-plan';
import type { WlmNode } from '../../../core/site/site-nodes';
import { heldLocks, names } from '../../../core/rolling-upgrade/stage-decision';
import { renewHeld, takeLocks } from '../node-claims';
import { ClaimedElsewhereError } from '../../../core/errors';
import { foreignClaims } from '../site-claims';
import { lockLeaseSeconds, type RollingUpgradeDependencies } from './dependencies';
import { PlanCache } from './plan-cache';

/** The nodes of `step` with their records, from the plan snapshot (never the live group). */
export async function loadStepNodes(deps: RollingUpgradeDependencies, session: UpgradeSession, step: number): Promise<NodeRecord[]> {
  const { start, end } = stepRange(step, session.upgradeStepSize, session.nodeCount);
  return loadPlanNodes(deps, session, start, end);
}

export async function loadPlanNodes(deps: RollingUpgradeDependencies, session: UpgradeSession, start: number, end: number): Promise<NodeRecord[]> {
  if (end <= start) return [];
  const names = await deps.store.getPlanSlice(session.upgradeId, start, end);
  return deps.store.getNodes(
    session.upgradeId,
    names.map((name, i) => ({ name, index: start + i })),
  );
}

/**
 * The nodes as the workload manager reports them (no call for no nodes); `bootedSince`: their boot
 * after this time (epoch ms) decides now. Nodes the site shows claimed by a run of another control
 * plane stop the increment before anything is done to them (ClaimedElsewhereError: the runner leaves
 * them alone, then the increment goes on without them).
 */
export async function observeWlm(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  nodes: readonly NodeRecord[],
  bootedSince?: number,
): Promise<Map<string, WlmNode>> {
  if (nodes.length === 0) return new Map();
  const names = nodes.map((n) => n.name);
  const wlm = await deps.site.workloadManager.getNodes(
    names,
    bootedSince === undefined ? undefined : { bootedSince: new Map(names.map((n) => [n, bootedSince])) },
  );
  const claimed = await foreignClaims(deps.store.locks, session.upgradeId, wlm);
  if (claimed.size > 0) throw new ClaimedElsewhereError(session.upgradeId, claimed);
  return wlm;
}

/**
 * Locks every node for the session, or none: when another session holds some, the ones taken are
 * given back at once (so two sessions never deadlock). Returns the nodes held by others, with their owner.
 */
export async function lockAllOrNone(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  nodes: readonly NodeRecord[],
): Promise<{ heldByOthers: Map<string, string>; locked: NodeRecord[] }> {
  const { locked, heldByOthers } = await takeLocks(deps.store.locks, session.upgradeId, names(nodes), lockLeaseSeconds(deps.settings, session), 'all-or-none');
  // The tokens of the acquisition: recorded with the nodes, every later node-changing call is checked against them.
  return { heldByOthers, locked: heldByOthers.size > 0 ? [] : nodes.map((n) => ({ ...n, lockToken: locked.get(n.name)! })) };
}

/**
 * Locks each node for the session on its own (mode window: a node another session holds is simply
 * not started), with a lease and a fencing token. Returns the nodes held by others, with their
 * owner, and the records of the nodes locked, carrying their tokens.
 */
export async function lockEachNode(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  nodes: readonly NodeRecord[],
): Promise<{ heldByOthers: Map<string, string>; locked: NodeRecord[] }> {
  const { locked, heldByOthers } = await takeLocks(deps.store.locks, session.upgradeId, names(nodes), lockLeaseSeconds(deps.settings, session), 'each');
  return { heldByOthers, locked: nodes.filter((n) => locked.has(n.name)).map((n) => ({ ...n, lockToken: locked.get(n.name)! })) };
}

/**
 * The heartbeat, and the check before acting: renews the session's locks on these nodes with the
 * tokens it recorded. Returns the nodes lost to another session (or released), with their holder.
 */
export async function renewLocks(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  nodes: readonly NodeRecord[],
): Promise<Map<string, string | undefined>> {
  return renewHeld(deps.store.locks, session.upgradeId, heldLocks(nodes), lockLeaseSeconds(deps.settings, session));
}

/** The session's plan positions, read through the container's cache. */
export const planCacheOf = (deps: RollingUpgradeDependencies) => deps.planCache ?? new PlanCache(deps.store);

/** The records of the window's in-flight index: the only node records an increment reads. */
export async function loadWindowInFlight(deps: RollingUpgradeDependencies, session: UpgradeSession): Promise<NodeRecord[]> {
  const positions = session.progress.window?.inFlight ?? [];
  if (positions.length === 0) return [];
  return deps.store.getNodes(session.upgradeId, await planCacheOf(deps).at(session, positions));
}
