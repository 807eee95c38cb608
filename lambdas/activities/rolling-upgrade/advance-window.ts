import { decideWindow, scheduleWindow, type WindowObserved } from '../../../core/rolling-upgrade/window-decisions';
import { upgradeOpId } from '../../../core/rolling-upgrade/upgrade-policy';
import type { NodeRecord, UpgradeSession } from '../../../core/rolling-upgrade/session';
import type { BootSessionStatus } from '../../../core/site/site-nodes';
import type { RollingUpgradeDependencies } from './dependencies';
import { applyDecision } from './apply-decision';
import type { ActivityBody } from './activity-runner';

/** Every node of the plan with its record, in plan order: one query for the records written, the plan in slices. */
async function loadPlanRecords(deps: RollingUpgradeDependencies, session: UpgradeSession): Promise<NodeRecord[]> {
  const plan = await deps.store.getPlanSlice(session.upgradeId, 0, session.nodeCount);
  const written = new Map((await deps.store.listNodes(session.upgradeId)).map((r) => [r.name, r]));
  return plan.map((name, index) => written.get(name) ?? { name, index, status: 'NOT_STARTED' });
}

/**
 * ROLLING: load the plan's records, observe the site (the workload manager for every node not yet
 * done, the inventory, the boot sessions of booting nodes), let the annealer decide, take the lock
 * of each node it starts (a node another session holds does not start), then apply (core: decideWindow).
 */
export const advanceWindow: ActivityBody = async ({ session, progress, deps, now }) => {
  const records = await loadPlanRecords(deps, session);
  const open = records.filter((r) => r.status !== 'UPGRADED' && r.status !== 'FAILED').map((r) => r.name);
  const bootNames = [...new Set(records.flatMap((r) => (r.phase === 'BOOTING' && r.boot ? [r.boot.session] : [])))];
  const [wlm, inventoryNodes, boots] = await Promise.all([
    open.length > 0 ? deps.site.workloadManager.getNodes(open) : Promise.resolve(new Map()),
    deps.site.inventory.listNodes(),
    Promise.all(bootNames.map(async (name) => [name, await deps.site.bootService.getSession(name)] as [string, BootSessionStatus | undefined])),
  ]);
  const observed: WindowObserved = { wlm, inventory: new Map(inventoryNodes.map((n) => [n.name, n])), boots: new Map(boots) };
  const input = { session, progress, records, observed, now };
  const decision = scheduleWindow(input);
  const nodeOfOp = new Map(records.map((r) => [upgradeOpId(r.name), r.name]));
  const starting = decision.start.map((s) => nodeOfOp.get(s.op)!);
  const lockedByOthers = starting.length > 0 ? new Set((await deps.store.tryLockNodes(session.upgradeId, starting)).keys()) : new Set<string>();
  return applyDecision(deps, session, decideWindow({ ...input, decision, lockedByOthers }));
};
