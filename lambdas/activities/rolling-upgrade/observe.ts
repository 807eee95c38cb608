/** What the activities read before they decide: the step's nodes and their records, the workload manager's view, the locks. */
import type { NodeRecord, UpgradeSession } from '../../../core/rolling-upgrade/session';
import { stepRange } from '../../../core/rolling-upgrade/step-plan';
import type { WlmNode } from '../../../core/site/site-nodes';
import { heldLocks } from '../../../core/rolling-upgrade/stage-decision';
import { lockLeaseSeconds, type RollingUpgradeDependencies } from './dependencies';

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

/** The nodes as the workload manager reports them (no call for no nodes); `bootedSince`: their boot after this time (epoch ms) decides now. */
export async function observeWlm(deps: RollingUpgradeDependencies, nodes: readonly NodeRecord[], bootedSince?: number): Promise<Map<string, WlmNode>> {
  if (nodes.length === 0) return new Map();
  const names = nodes.map((n) => n.name);
  return deps.site.workloadManager.getNodes(names, bootedSince === undefined ? undefined : { bootedSince: new Map(names.map((n) => [n, bootedSince])) });
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
  if (nodes.length === 0) return { heldByOthers: new Map(), locked: [] };
  const owner = session.upgradeId;
  const names = nodes.map((n) => n.name);
  const heldByOthers = await deps.store.tryLockNodes(owner, names, lockLeaseSeconds(deps.settings, session));
  if (heldByOthers.size > 0) {
    await deps.store.releaseNodeLocks(owner, names.filter((n) => !heldByOthers.has(n)));
    return { heldByOthers, locked: [] };
  }
  // The tokens of the acquisition: recorded with the nodes, every later node-changing call is checked against them.
  const locks = await deps.store.getNodeLocks(names);
  const tokenOf = (name: string) => (locks.get(name)?.owner === owner ? { lockToken: locks.get(name)!.fencingToken } : {});
  return { heldByOthers, locked: nodes.map((n) => ({ ...n, ...tokenOf(n.name) })) };
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
  if (nodes.length === 0) return { heldByOthers: new Map(), locked: [] };
  const owner = session.upgradeId;
  const heldByOthers = await deps.store.tryLockNodes(owner, nodes.map((n) => n.name), lockLeaseSeconds(deps.settings, session));
  const taken = nodes.filter((n) => !heldByOthers.has(n.name));
  const locks = taken.length > 0 ? await deps.store.getNodeLocks(taken.map((n) => n.name)) : new Map();
  // Taken, then taken over before we read it back (a stall past the lease): not ours, so not started.
  const ours = taken.filter((n) => locks.get(n.name)?.owner === owner);
  for (const n of taken) if (locks.get(n.name)?.owner !== owner) heldByOthers.set(n.name, locks.get(n.name)?.owner ?? 'unknown');
  return { heldByOthers, locked: ours.map((n) => ({ ...n, lockToken: locks.get(n.name)!.fencingToken })) };
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
  const held = heldLocks(nodes);
  if (held.size === 0) return new Map();
  const lost = await deps.store.renewNodeLocks(session.upgradeId, held, lockLeaseSeconds(deps.settings, session));
  return new Map([...lost].map(([node, lock]) => [node, lock?.owner === session.upgradeId ? undefined : lock?.owner]));
}
