import {
  decideWindow,
  initialWindowProgress,
  scheduleWindow,
  sortInFlight,
  type WindowObserved,
  type WindowView,
} from '../../../core/rolling-upgrade/window-decisions';
import { loadWindowInFlight, planCacheOf } from './observe';
import { upgradeOpId, upgradePolicy } from '../../../core/rolling-upgrade/upgrade-policy';
import { decideLocksLost, names } from '../../../core/rolling-upgrade/stage-decision';
import { todoPositions } from '../../../core/rolling-upgrade/plan-marks';
import type { NodeRecord, UpgradeSession, WindowProgress } from '../../../core/rolling-upgrade/session';
import { holdPlannedSlots } from './slot-reservations';
import type { BootSessionStatus, InventoryNode, WlmNode } from '../../../core/site/site-nodes';
import type { RollingUpgradeDependencies } from './dependencies';
import { performDecision } from './perform-decision';
import { lockEachNode, renewLocks } from './observe';
import { observeHealthChecks } from './health-checks';
import type { StageIncrement } from './activity-runner';
import { eventTime, publishStatusEvents } from '../status-events';
import { windowEvents } from './window-events';
import { ClaimedElsewhereError } from '../../../core/errors';
import { foreignClaims } from '../site-claims';

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
  await performDecision(deps, session, { progress: session.progress, waitSeconds: 0, actions: decision.actions });
  await deps.store.messages.append(session.upgradeId, decision.message);
  const changed = new Map(decision.actions.flatMap((a) => (a.type === 'recordNodes' ? a.records : [])).map((r) => [r.name, r]));
  return records.map((r) => changed.get(r.name) ?? r);
}

/** TODO nodes looked at in one go while scanning the plan for candidates (plan order). */
const SCAN_BATCH = 32;

/** What findCandidates looks from: the session, its window and nodes in flight, and the site as read so far. */
interface CandidateScan {
  session: UpgradeSession;
  window: WindowProgress;
  inFlight: readonly NodeRecord[];
  /** The inventory, read once on first use. */
  inventory: () => Promise<ReadonlyMap<string, InventoryNode>>;
  /** The workload manager's nodes read so far; readWlm adds the named ones. */
  wlm: ReadonlyMap<string, WlmNode>;
  readWlm: (names: readonly string[]) => Promise<void>;
}

/**
 * The candidates of this increment and what the site says of them. Idle-first ranks every TODO node
 * by its running job, so it looks at all of them (one workload manager listing). Plan order looks at
 * the next TODO nodes in plan order until it has enough that could start now (alive, available, a
 * rack with room), so an increment looks at O(slots) nodes plus those it has to pass over.
 */
async function findCandidates(deps: RollingUpgradeDependencies, scan: CandidateScan): Promise<{ candidates: NodeRecord[]; todo: number[] }> {
  const { session, window, inFlight, inventory, wlm, readWlm } = scan;
  const policy = upgradePolicy(session, session.nodeCount);
  const index = new Set(window.inFlight ?? []);
  const todo = todoPositions(window.marks!, session.nodeCount, index);
  const plan = planCacheOf(deps);
  const observe = async (positions: readonly number[]) => {
    const nodes = await plan.at(session, positions);
    await readWlm(nodes.map((n) => n.name));
    return nodes.map(({ name, index: i }): NodeRecord => ({ name, index: i, status: 'NOT_STARTED' }));
  };
  if (policy.order === 'idle-first') return { candidates: await observe(todo), todo };

  // Plan order: enough that could start now to fill every free slot and the drain-ahead room, passing over the others.
  const need = Math.max(1, policy.maxInTransition + policy.drainAhead - inFlight.length);
  const racks = await inventory();
  const perRack = new Map<string, number>();
  for (const r of inFlight) {
    const rack = racks.get(r.name)?.rack;
    if (rack !== undefined) perRack.set(rack, (perRack.get(rack) ?? 0) + 1);
  }
  const startable = (name: string) => {
    const inv = racks.get(name);
    if (!wlm.has(name) || inv?.alive === false || inv?.available === false) return false;
    return policy.maxPerRack === undefined || inv?.rack === undefined || (perRack.get(inv.rack) ?? 0) < policy.maxPerRack;
  };
  const candidates: NodeRecord[] = [];
  let eligible = 0;
  for (let from = 0; from < todo.length && eligible < need; from += SCAN_BATCH) {
    for (const record of await observe(todo.slice(from, from + Math.max(SCAN_BATCH, need)))) {
      candidates.push(record);
      if (startable(record.name)) eligible++;
    }
  }
  return { candidates, todo };
}

/**
 * ROLLING: read the in-flight index's records (O(in flight): the plan's marks and counts on the
 * session item stand for the rest), renew their locks (the heartbeat), observe them (the workload
 * manager, boot sessions, health checks), pick and observe the candidates, let the annealer decide,
 * take the lock of each node it starts, each on its own (with a lease and a fencing token; a node
 * another session holds does not start), then apply (core: decideWindow). Every node-changing call
 * is made only after the locks of the nodes it acts on are checked against their tokens.
 */
export const advanceWindow: StageIncrement = async ({ session, progress, deps, now }) => {
  const window = progress.window ?? initialWindowProgress(session.nodeCount);
  const sorted = sortInFlight(await heartbeatWindow(deps, session, await loadWindowInFlight(deps, session)));
  const { inFlight } = sorted;
  const wm = deps.site.workloadManager;
  let listed: Promise<ReadonlyMap<string, InventoryNode>> | undefined;
  const inventory = () => (listed ??= deps.site.inventory.listNodes().then((nodes) => new Map(nodes.map((n) => [n.name, n]))));
  const bootNames = [...new Set(inFlight.flatMap((r) => (r.phase === 'BOOTING' && r.boot ? [r.boot.session] : [])))];
  // One workload manager read for the nodes in flight and the first candidates (one command per poll on a command transport).
  const wlm = new Map<string, WlmNode>();
  const bootedSince = new Map(
    inFlight.flatMap((r) => ((r.phase === 'BOOTED' || r.phase === 'CHECKING') && r.boot ? [[r.name, r.boot.requestedAt] as const] : [])),
  );
  let pending = names(inFlight);
  const readWlm = async (more: readonly string[]) => {
    const ask = [...new Set([...pending, ...more])].filter((name) => !wlm.has(name));
    pending = [];
    if (ask.length > 0) for (const [name, node] of await wm.getNodes(ask, { bootedSince })) wlm.set(name, node);
  };
  // Candidates only while the run may start nodes (the delete sequence starts none).
  // A stopping window looks at none either, but counts what is left to start (so it stops rather than finishes).
  const { candidates, todo } =
    session.state === 'DELETING'
      ? { candidates: [], todo: [] }
      : session.state === 'STOPPING'
        ? { candidates: [], todo: todoPositions(window.marks!, session.nodeCount, new Set(window.inFlight ?? [])) }
        : await findCandidates(deps, { session, window, inFlight, inventory, wlm, readWlm });
  await readWlm([]);
  // After the listing: a boot session's read of the same nodes reuses it.
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
  // haltOnOutsideFailures: the workload manager's view of every inventory node outside the plan.
  let outside: Map<string, WlmNode> | undefined;
  if (session.haltOnOutsideFailures) {
    const inPlan = new Set(await planCacheOf(deps).all(session));
    const outsideNames = [...(await inventory()).keys()].filter((n) => !inPlan.has(n));
    outside = outsideNames.length > 0 ? await wm.getNodes(outsideNames) : new Map();
  }
  const observed: WindowObserved = {
    wlm,
    inventory: candidates.length > 0 || inFlight.some((r) => r.op?.holdsSlot === false) ? await inventory() : new Map(),
    boots: new Map(boots),
    checks,
    ...(jobEnds ? { jobEnds } : {}),
    ...(outside ? { outside } : {}),
    ...(claimed.size > 0 ? { claimedElsewhere: claimed } : {}),
  };
  const view: WindowView = { ...sorted, candidates, todoOutside: todo.length - candidates.length };
  const decision = scheduleWindow({ session, progress, view, observed, now });

  const byName = new Map(candidates.map((r) => [r.name, r]));
  const nodeOfOp = new Map(candidates.map((r) => [upgradeOpId(r.name), r.name]));
  const starting = decision.start.map((s) => byName.get(nodeOfOp.get(s.op)!)!);
  const { heldByOthers, locked } = await lockEachNode(deps, session, starting);
  // The records of the nodes locked now carry their tokens: recorded with them, and checked before acting.
  const lockedNow = new Map(locked.map((r) => [r.name, r]));
  const withTokens: WindowView = { ...view, candidates: candidates.map((r) => lockedNow.get(r.name) ?? r) };
  // Finishing halted: every TODO node outside the view is recorded left alone, once.
  const lookedAt = new Set(candidates.map((r) => r.index));
  const outsideTodo =
    decision.finished && decision.leftAloneOutside !== undefined
      ? (
          await planCacheOf(deps).at(
            session,
            todo.filter((p) => !lookedAt.has(p)),
          )
        ).map(({ name, index }): NodeRecord => ({ name, index, status: 'NOT_STARTED' }))
      : [];
  const stageDecision = decideWindow({
    session,
    progress,
    view: withTokens,
    observed,
    now,
    decision,
    lockedByOthers: new Set(heldByOthers.keys()),
    outsideTodo,
  });
  const outcome = await performDecision(deps, session, stageDecision, windowHeldNodes(inFlight).concat(locked));
  await publishStatusEvents(deps, windowEvents(session, progress, stageDecision.progress, eventTime(now)));
  // Last: the increment's decision is applied and told whatever the reservations do (a failure here is retried as the increment).
  if (session.reserveSlots) await holdPlannedSlots(deps, session, { progress: stageDecision.progress, decision, candidates, inFlight, wlm, jobEnds, now });
  return outcome;
};
