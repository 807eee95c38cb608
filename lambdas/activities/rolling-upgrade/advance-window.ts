import {
  decideWindow,
  initialWindowProgress,
  scheduleWindow,
  sortInFlight,
  windowSchedule,
  type WindowObserved,
  type WindowView,
} from '../../../core/rolling-upgrade/window-decisions';
import { candidatesStarting, outsideTodoToRecord, WindowCandidateScan } from '../../../core/rolling-upgrade/window-candidates';
import { loadWindowInFlight, planCacheOf } from './observe';
import { decideLocksLost, names } from '../../../core/rolling-upgrade/stage-decision';
import type { NodeRecord, UpgradeSession, WindowProgress } from '../../../core/rolling-upgrade/session';
import { holdPlannedSlots } from './slot-reservations';
import type { BootSessionStatus, InventoryNode, WlmNode } from '../../../core/site/site-nodes';
import type { RollingUpgradeDependencies } from './dependencies';
import { performDecision } from './perform-decision';
import { lockEachNode, renewLocks } from './observe';
import { observeHealthChecks } from './health-checks';
import type { LockHeartbeat, StageIncrement } from './activity-runner';
import { eventTime, publishStatusEvents } from '../status-events';
import { windowEvents } from './window-events';
import { ClaimedElsewhereError } from '../../../core/errors';
import { foreignClaims } from '../site-claims';
import { readInventoryNodes } from '../inventory-nodes';

/** The nodes the window holds the lock of: in flight, with the token of their lock. */
export function windowHeldNodes(records: readonly NodeRecord[]): NodeRecord[] {
  return records.filter((r) => r.status === 'IN_PROGRESS' && r.phase !== 'LOCK_LOST' && r.lockToken !== undefined);
}

/**
 * The window's heartbeat, when due (a quarter lease apart: LockHeartbeat): renews the leases of the nodes in
 * flight with their tokens. Nodes another session took over meanwhile are recorded LOCK_LOST (left alone from
 * now on). Returns the records as they stand after it.
 */
async function heartbeatWindow(deps: RollingUpgradeDependencies, session: UpgradeSession, records: NodeRecord[], locks: LockHeartbeat): Promise<NodeRecord[]> {
  if (!locks.due) return records;
  const held = windowHeldNodes(records);
  const lost = await renewLocks(deps, session, held);
  const decision = decideLocksLost('window', held, lost);
  if (!decision) return records;
  await performDecision(deps, session, { progress: session.progress, waitSeconds: 0, actions: decision.actions });
  await deps.store.messages.append(session.upgradeId, decision.message);
  const changed = new Map(decision.actions.flatMap((a) => (a.type === 'recordNodes' ? a.records : [])).map((r) => [r.name, r]));
  return records.map((r) => changed.get(r.name) ?? r);
}

/** The workload manager's nodes read so far, and how to read more: the nodes in flight go with the first read. */
interface WlmReads {
  wlm: ReadonlyMap<string, WlmNode>;
  /** Reads the named nodes not read yet, with the nodes in flight if not read yet. */
  read: (names: readonly string[]) => Promise<void>;
}

/** One workload manager read for the nodes in flight and the first candidates (one command per poll on a command transport). */
function wlmReads(deps: RollingUpgradeDependencies, inFlight: readonly NodeRecord[]): WlmReads {
  const wlm = new Map<string, WlmNode>();
  const bootedSince = new Map(
    inFlight.flatMap((r) => ((r.phase === 'BOOTED' || r.phase === 'CHECKING') && r.boot ? [[r.name, r.boot.requestedAt] as const] : [])),
  );
  let pending = names(inFlight);
  const read = async (more: readonly string[]) => {
    const ask = [...new Set([...pending, ...more])].filter((name) => !wlm.has(name));
    pending = [];
    if (ask.length > 0) for (const [name, node] of await deps.site.workloadManager.getNodes(ask, { bootedSince })) wlm.set(name, node);
  };
  return { wlm, read };
}

/** The inventory's nodes read so far (alive, available, rack), and how to read more. */
interface InventoryReads {
  nodes: ReadonlyMap<string, InventoryNode>;
  /** Reads the named nodes not read yet: those alone (Inventory.getNodes), not the whole inventory. */
  read: (names: readonly string[]) => Promise<void>;
  /** Reads the whole inventory, once: haltOnOutsideFailures looks at every node outside the plan. */
  list: () => Promise<void>;
}

/** The inventory reads of one increment: the nodes it looks at, or one listing when it needs the whole inventory anyway. */
function inventoryReads(deps: RollingUpgradeDependencies, session: UpgradeSession): InventoryReads {
  const nodes = new Map<string, InventoryNode>();
  const asked = new Set<string>();
  let listed: Promise<void> | undefined;
  const list = () =>
    (listed ??= deps.site.inventory.listNodes().then((all) => {
      for (const node of all) nodes.set(node.name, node);
    }));
  const read = async (names: readonly string[]) => {
    // The listing haltOnOutsideFailures reads serves every other read of the increment.
    if (session.haltOnOutsideFailures) return list();
    const ask = [...new Set(names)].filter((name) => !asked.has(name));
    if (ask.length === 0) return;
    for (const name of ask) asked.add(name);
    for (const [name, node] of await readInventoryNodes(deps.site.inventory, ask)) nodes.set(name, node);
  };
  return { nodes, read, list };
}

/** Runs the candidate scan (core: WindowCandidateScan) on the site: the plan's names, the workload manager and (plan order) the inventory for each batch it asks. */
async function scanCandidates(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  scan: WindowCandidateScan,
  reads: WlmReads,
  inventory: InventoryReads,
  inFlight: readonly NodeRecord[],
): Promise<void> {
  const site = { wlm: reads.wlm, inventory: inventory.nodes };
  const plan = planCacheOf(deps);
  for (let batch = scan.next(); batch.length > 0; batch = scan.next()) {
    const nodes = await plan.at(session, batch);
    const batchNames = nodes.map((n) => n.name);
    // The racks of the nodes in flight go with the first batch (the scan's rack cap).
    await Promise.all([reads.read(batchNames), scan.readsInventory ? inventory.read([...names(inFlight), ...batchNames]) : undefined]);
    scan.add(
      nodes.map(({ name, index }): NodeRecord => ({ name, index, status: 'NOT_STARTED' })),
      site,
    );
  }
}

/**
 * What the increment reads of the site: the candidates (scanned), then the workload manager, boot
 * sessions and health checks of the nodes in flight and the candidates, the site's claims, the jobs'
 * ends and, with haltOnOutsideFailures, the nodes outside the plan. The inventory is read for the
 * nodes looked at alone (in flight and candidates: Inventory.getNodes), except with haltOnOutsideFailures,
 * which needs the whole of it (one listing, serving the rest).
 */
async function observeWindow(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  window: WindowProgress,
  inFlight: readonly NodeRecord[],
): Promise<{ scan: WindowCandidateScan; observed: WindowObserved }> {
  const wm = deps.site.workloadManager;
  const inventory = inventoryReads(deps, session);
  const reads = wlmReads(deps, inFlight);
  const scan = new WindowCandidateScan(session, window, inFlight);
  await scanCandidates(deps, session, scan, reads, inventory, inFlight);
  await reads.read([]);
  const { candidates } = scan;
  const { wlm } = reads;
  // After the listing: a boot session's read of the same nodes reuses it.
  const bootNames = [...new Set(inFlight.flatMap((r) => (r.phase === 'BOOTING' && r.boot ? [r.boot.session] : [])))];
  const [boots, checks] = await Promise.all([
    Promise.all(bootNames.map(async (name) => [name, await deps.site.bootService.getSession(name)] as [string, BootSessionStatus | undefined])),
    observeHealthChecks(deps, inFlight),
  ]);
  // The site's claims: a node in flight that another control plane's run claims now is left alone
  // (the runner records it); a candidate it claims does not start while it does.
  const claimed = await foreignClaims(deps.store.locks, session.upgradeId, wlm);
  const claimedInFlight = new Map([...claimed].filter(([name]) => inFlight.some((r) => r.name === name)));
  if (claimedInFlight.size > 0) throw new ClaimedElsewhereError(session.upgradeId, claimedInFlight);
  const wantsJobEnds = session.order === 'idle-first' || (session.drainAhead ?? 0) > 0 || session.reserveSlots === true;
  const looked = [...names(inFlight), ...names(candidates)];
  const jobEnds = looked.length > 0 && wantsJobEnds && wm.getJobEnds ? await wm.getJobEnds(looked) : undefined;
  // haltOnOutsideFailures: the workload manager's view of every inventory node outside the plan. The
  // whole inventory is truly needed here (which nodes are outside the plan): listNodes, not getNodes.
  let outside: Map<string, WlmNode> | undefined;
  if (session.haltOnOutsideFailures) {
    const inPlan = new Set(await planCacheOf(deps).all(session));
    await inventory.list();
    const outsideNames = [...inventory.nodes.keys()].filter((n) => !inPlan.has(n));
    outside = outsideNames.length > 0 ? await wm.getNodes(outsideNames) : new Map();
  }
  // The scheduler's gates of the nodes in the view (in flight and candidates): read for them alone.
  const gated = candidates.length > 0 || inFlight.some((r) => r.op?.holdsSlot === false);
  if (gated) await inventory.read([...names(inFlight), ...names(candidates)]);
  const observed: WindowObserved = {
    wlm,
    inventory: gated ? inventory.nodes : new Map(),
    boots: new Map(boots),
    checks,
    ...(jobEnds ? { jobEnds } : {}),
    ...(outside ? { outside } : {}),
    ...(claimed.size > 0 ? { claimedElsewhere: claimed } : {}),
  };
  return { scan, observed };
}

/** The records of TODO nodes at these plan positions, as never started (no read when there are none). */
async function notStartedAt(deps: RollingUpgradeDependencies, session: UpgradeSession, positions: readonly number[]): Promise<NodeRecord[]> {
  if (positions.length === 0) return [];
  return (await planCacheOf(deps).at(session, positions)).map(({ name, index }): NodeRecord => ({ name, index, status: 'NOT_STARTED' }));
}

/**
 * ROLLING: read the in-flight index's records (O(in flight): the plan's marks and counts on the
 * session item stand for the rest), renew their locks (the heartbeat), observe them (the workload
 * manager, boot sessions, health checks), pick and observe the candidates, let the annealer decide,
 * take the lock of each node it starts, each on its own (with a lease and a fencing token; a node
 * another session holds does not start), then apply (core: decideWindow). Every node-changing call
 * is made only after the locks of the nodes it acts on are checked against their tokens.
 */
export const advanceWindow: StageIncrement = async ({ session, progress, deps, now, locks }) => {
  const window = progress.window ?? initialWindowProgress(session.nodeCount);
  const sorted = sortInFlight(await heartbeatWindow(deps, session, await loadWindowInFlight(deps, session), locks));
  const { scan, observed } = await observeWindow(deps, session, window, sorted.inFlight);
  const { candidates } = scan;
  const view: WindowView = { ...sorted, candidates, todoOutside: scan.todo.length - candidates.length };
  // Derived once: the scheduler's pass and the decision after it read the same window and schedule state.
  const schedule = windowSchedule(session, progress, view);
  const decision = scheduleWindow({ session, progress, view, observed, now, schedule });
  const { heldByOthers, locked } = await lockEachNode(deps, session, candidatesStarting(candidates, decision));
  // The records of the nodes locked now carry their tokens: recorded with them, and checked before acting.
  const lockedNow = new Map(locked.map((r) => [r.name, r]));
  const withTokens: WindowView = { ...view, candidates: candidates.map((r) => lockedNow.get(r.name) ?? r) };
  // Finishing halted: every TODO node outside the view is recorded left alone, once.
  const outsideTodo = await notStartedAt(deps, session, outsideTodoToRecord(scan, decision));
  const lockedByOthers = new Set(heldByOthers.keys());
  const stageDecision = decideWindow({ session, progress, view: withTokens, observed, now, schedule, decision, lockedByOthers, outsideTodo });
  const outcome = await performDecision(deps, session, stageDecision, windowHeldNodes(sorted.inFlight).concat(locked), locks.renewedAt);
  await publishStatusEvents(deps, windowEvents(session, progress, stageDecision.progress, eventTime(now)));
  // Last: the increment's decision is applied and told whatever the reservations do (a failure here is retried as the increment).
  if (session.reserveSlots) {
    const { wlm, jobEnds } = observed;
    await holdPlannedSlots(deps, session, { progress: stageDecision.progress, decision, candidates, inFlight: sorted.inFlight, wlm, jobEnds, now });
  }
  return outcome;
};
