import { decideWindow, scheduleWindow, type WindowObserved } from '../../../core/rolling-upgrade/window-decisions';
import { upgradeOpId } from '../../../core/rolling-upgrade/upgrade-policy';
import { decideLocksLost } from '../../../core/rolling-upgrade/stage-decision';
import type { NodeRecord, UpgradeSession } from '../../../core/rolling-upgrade/session';
import type { BootSessionStatus } from '../../../core/site/site-nodes';
import type { RollingUpgradeDependencies } from './dependencies';
import { applyDecision } from './apply-decision';
import { lockEachNode, renewLocks } from './observe';
import { observeHealthChecks } from './health-checks';
import type { ActivityBody } from './activity-runner';

/** Every node of the plan with its record, in plan order: one query for the records written, the plan in slices. */
export async function loadPlanRecords(deps: RollingUpgradeDependencies, session: UpgradeSession): Promise<NodeRecord[]> {
  const plan = await deps.store.getPlanSlice(session.upgradeId, 0, session.nodeCount);
  const written = new Map((await deps.store.listNodes(session.upgradeId)).map((r) => [r.name, r]));
  return plan.map((name, index) => written.get(name) ?? { name, index, status: 'NOT_STARTED' });
}

/** The nodes the window holds the lock of: in flight, with the token of their lock. */
export function windowHeldNodes(records: readonly NodeRecord[]): NodeRecord[] {
  return records.filter((r) => r.status === 'IN_PROGRESS' && r.phase !== 'LOCK_LOST' && r.lockToken !== undefined);
}

/**
 * The window's heartbeat: renews the leases of the nodes in flight with their tokens. Nodes another
 * session took over meanwhile are recorded LOCK_LOST (left alone from now on). Returns the records
 * as they stand after it.
 */
async function heartbeatWindow(deps: RollingUpgradeDependencies, session: UpgradeSession, records: NodeRecord[]): Promise<NodeRecord[]> {
  const held = windowHeldNodes(records);
  const lost = await renewLocks(deps, session, held);
  const decision = decideLocksLost('window', held, lost);
  if (!decision) return records;
  await applyDecision(deps, session, { progress: session.progress, waitSeconds: 0, actions: decision.actions });
  await deps.store.appendMessage(session.upgradeId, decision.message);
  const changed = new Map(decision.actions.flatMap((a) => (a.type === 'recordNodes' ? a.records : [])).map((r) => [r.name, r]));
  return records.map((r) => changed.get(r.name) ?? r);
}

/**
 * ROLLING: load the plan's records, renew the locks of the nodes in flight (the heartbeat), observe
 * the site (the workload manager for every node not yet done, the inventory, the boot sessions of
 * booting nodes), let the annealer decide, take the lock of each node it starts, each on its own
 * (with a lease and a fencing token; a node another session holds does not start), then apply
 * (core: decideWindow). Every node-changing call is made only after the locks of the nodes it acts
 * on are checked against their tokens.
 */
export const advanceWindow: ActivityBody = async ({ session, progress, deps, now }) => {
  const records = await heartbeatWindow(deps, session, await loadPlanRecords(deps, session));
  const open = records.filter((r) => r.status !== 'UPGRADED' && r.status !== 'FAILED' && r.phase !== 'LOCK_LOST').map((r) => r.name);
  const bootNames = [...new Set(records.flatMap((r) => (r.phase === 'BOOTING' && r.boot ? [r.boot.session] : [])))];
  const wantsJobEnds = session.order === 'idle-first' || (session.drainAhead ?? 0) > 0;
  const wm = deps.site.workloadManager;
  const [wlm, jobEnds, inventoryNodes, boots, checks] = await Promise.all([
    open.length > 0 ? wm.getNodes(open) : Promise.resolve(new Map()),
    open.length > 0 && wantsJobEnds && wm.getJobEnds ? wm.getJobEnds(open) : Promise.resolve(undefined),
    deps.site.inventory.listNodes(),
    Promise.all(bootNames.map(async (name) => [name, await deps.site.bootService.getSession(name)] as [string, BootSessionStatus | undefined])),
    observeHealthChecks(deps, records),
  ]);
  // haltOnOutsideFailures: the workload manager's view of every inventory node outside the plan.
  const inPlan = new Set(records.map((r) => r.name));
  const outsideNames = session.haltOnOutsideFailures ? inventoryNodes.map((n) => n.name).filter((n) => !inPlan.has(n)) : [];
  const outside = session.haltOnOutsideFailures ? (outsideNames.length > 0 ? await wm.getNodes(outsideNames) : new Map()) : undefined;
  const observed: WindowObserved = { wlm, inventory: new Map(inventoryNodes.map((n) => [n.name, n])), boots: new Map(boots), checks, ...(jobEnds ? { jobEnds } : {}), ...(outside ? { outside } : {}) };
  const decision = scheduleWindow({ session, progress, records, observed, now });
  const byName = new Map(records.map((r) => [r.name, r]));
  const nodeOfOp = new Map(records.map((r) => [upgradeOpId(r.name), r.name]));
  const starting = decision.start.map((s) => byName.get(nodeOfOp.get(s.op)!)!);
  const { heldByOthers, locked } = await lockEachNode(deps, session, starting);
  // The records of the nodes locked now carry their tokens: recorded with them, and checked before acting.
  const lockedNow = new Map(locked.map((r) => [r.name, r]));
  const withTokens = records.map((r) => lockedNow.get(r.name) ?? r);
  const stageDecision = decideWindow({ session, progress, records: withTokens, observed, now, decision, lockedByOthers: new Set(heldByOthers.keys()) });
  return applyDecision(deps, session, stageDecision, windowHeldNodes(withTokens).concat(locked.filter((r) => r.status !== 'IN_PROGRESS')));
};
