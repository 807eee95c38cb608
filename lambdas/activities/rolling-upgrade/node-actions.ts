import pLimit from 'p-limit';
import { DRAIN_REASON, type NodeRecord, type UpgradeSession } from '../../../core/rolling-upgrade/session';
import { stepRange } from '../../../core/rolling-upgrade/step-plan';
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

/** Nodes still being worked on in the current step (not yet upgraded or failed). */
export function activeNodes(records: readonly NodeRecord[]): NodeRecord[] {
  return records.filter((r) => r.status === 'IN_PROGRESS' || r.status === 'NOT_STARTED');
}

export async function forEachConcurrently<T>(
  deps: RollingUpgradeDependencies,
  items: readonly T[],
  action: (item: T) => Promise<void>,
): Promise<void> {
  const limit = pLimit(deps.settings.siteConcurrency);
  await Promise.all(items.map((item) => limit(() => action(item))));
}

/**
 * Fails nodes as CRUS does (`scontrol update State=FAIL Reason=<reason>` and into the failed group),
 * records them FAILED and releases their locks. Every part is idempotent, so a retry after a crash
 * finishes the job without doing any part twice to a different effect.
 */
export async function failNodes(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  nodes: readonly NodeRecord[],
  reason: string,
): Promise<void> {
  if (nodes.length === 0) return;
  const names = nodes.map((n) => n.name);
  const known = await deps.site.workloadManager.getNodes(names);
  await forEachConcurrently(deps, names, async (name) => {
    const wlm = known.get(name);
    if (wlm && !(wlm.flags.includes('FAIL') && wlm.reason === reason)) await deps.site.workloadManager.fail(name, reason);
  });
  await deps.site.inventory.addGroupMembers(session.failedLabel, names);
  await deps.store.putNodes(
    session.upgradeId,
    nodes.map((n) => ({ name: n.name, index: n.index, status: 'FAILED', phase: 'DONE', reason })),
  );
  await deps.store.releaseNodeLocks(session.upgradeId, names);
}

/** Drains nodes for the upgrade unless our drain is already on them (a retried increment drains nothing twice). */
export async function drainNodes(deps: RollingUpgradeDependencies, names: readonly string[]): Promise<void> {
  const known = await deps.site.workloadManager.getNodes(names);
  await forEachConcurrently(deps, names, async (name) => {
    const wlm = known.get(name);
    if (!(wlm?.flags.includes('DRAIN') && wlm.reason === DRAIN_REASON)) await deps.site.workloadManager.drain(name, DRAIN_REASON);
  });
}

/** Lifts our drain from nodes (cancel before boot): nodes drained by someone else keep their drain. */
export async function undrainNodes(deps: RollingUpgradeDependencies, names: readonly string[]): Promise<void> {
  const known = await deps.site.workloadManager.getNodes(names);
  await forEachConcurrently(deps, names, async (name) => {
    const wlm = known.get(name);
    if (wlm?.flags.includes('DRAIN') && wlm.reason === DRAIN_REASON) await deps.site.workloadManager.resume(name);
  });
}
