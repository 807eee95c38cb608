/**
 * Planned slots held by maintenance reservations (request `reserveSlots`, mode window). Each TODO
 * node gets the time its slot is expected to free, and a Slurm maintenance reservation on it from
 * then on: Slurm starts no job on the node whose time limit runs past that time (reservation.c), so
 * the node is idle when its slot comes instead of having picked up a day-long job meanwhile. The
 * plan is made again every increment; a reservation moves only when its start moved by more than
 * the tolerance, and goes when its node starts (the drain holds it from then on) or the run stops
 * starting nodes. Pure: the increment (lambdas/activities/rolling-upgrade/advance-window.ts) reads
 * the site's reservations and applies the changes.
 */

export interface MaintenanceReservationView {
  name: string;
  nodes: string[];
  startsAt: number;
  endsAt: number;
}

/** Our reservations are named for the session: `rollout-<upgradeId>-<node>` (an admin sees whose they are). */
export const reservationPrefix = (upgradeId: string) => `rollout-${upgradeId}-`;
export const reservationName = (upgradeId: string, node: string) => `${reservationPrefix(upgradeId)}${node}`;

/** Before any node of the run finished: the slot a node holds is taken to last this long (boot + return, typical). */
export const DEFAULT_SLOT_SECONDS = 900;

export interface SlotPlanInput {
  now: number;
  maxUnavailable: number;
  /** Expected seconds a node holds its slot (boot + return), learned from the run's nodes. */
  slotSeconds: number;
  /** Slot holders: when they took the slot (epoch ms). */
  holders: readonly { admittedAt: number }[];
  /** TODO nodes in the order they would take a slot, each with when it can go out of service at the earliest (epoch ms): now when idle, its job's time limit end when busy. */
  todo: readonly { name: string; readyAt: number }[];
}

/**
 * Each TODO node's planned slot start: the earliest-ready-first list schedule over `maxUnavailable`
 * slots (bench/README: the lower bound's schedule), slots freeing `slotSeconds` after they were taken.
 */
export function planSlots({ now, maxUnavailable, slotSeconds, holders, todo }: SlotPlanInput): Map<string, number> {
  const hold = slotSeconds * 1000;
  const free = holders.map((h) => Math.max(now, h.admittedAt + hold)).sort((a, b) => a - b).slice(0, maxUnavailable);
  while (free.length < maxUnavailable) free.unshift(now);
  const ordered = [...todo].sort((a, b) => a.readyAt - b.readyAt);
  const plan = new Map<string, number>();
  // A small binary heap would do; the slots are few (maxUnavailable), so a sorted insert is enough.
  for (const node of ordered) {
    const slotFree = free.shift()!;
    const start = Math.max(slotFree, node.readyAt);
    plan.set(node.name, start);
    const end = start + hold;
    let i = free.findIndex((t) => t > end);
    if (i < 0) i = free.length;
    free.splice(i, 0, end);
  }
  return plan;
}

export interface ReservationChanges {
  put: MaintenanceReservationView[];
  move: MaintenanceReservationView[];
  remove: string[];
}

/**
 * What to change at the site so that it holds the plan: a reservation per planned node, starting at
 * its slot (never before the next increment can start it: `leadSeconds`) and lasting twice the slot
 * (a run that dies leaves nothing held for long: each reservation ends on its own); every other
 * reservation of the session goes. A start that moved by at most `toleranceSeconds` is left; one
 * that has started and whose slot moved further away is deleted and made again (removes apply first).
 */
export function reservationChanges(
  upgradeId: string,
  plan: ReadonlyMap<string, number>,
  existing: readonly MaintenanceReservationView[],
  { now, slotSeconds, leadSeconds, toleranceSeconds }: { now: number; slotSeconds: number; leadSeconds: number; toleranceSeconds: number },
): ReservationChanges {
  const byName = new Map(existing.map((r) => [r.name, r]));
  const changes: ReservationChanges = { put: [], move: [], remove: [] };
  const wanted = new Set<string>();
  for (const [node, slot] of plan) {
    const name = reservationName(upgradeId, node);
    wanted.add(name);
    const startsAt = Math.max(slot, now + leadSeconds * 1000);
    const want = { name, nodes: [node], startsAt, endsAt: startsAt + 2 * slotSeconds * 1000 };
    const have = byName.get(name);
    const tolerance = toleranceSeconds * 1000;
    if (!have) changes.put.push(want);
    else if (have.startsAt <= now) {
      // Started already: Slurm refuses to move it (update_resv: ESLURM_RSV_ALREADY_STARTED), so a slot
      // that moved away is made again; one near enough keeps the node free of new jobs until it starts.
      if (slot - now > tolerance) {
        changes.remove.push(name);
        changes.put.push(want);
      }
    } else if (Math.abs(have.startsAt - startsAt) > tolerance) changes.move.push(want);
  }
  for (const r of existing) if (!wanted.has(r.name)) changes.remove.push(r.name);
  return changes;
}

/** The slot length learned so far: a moving average of the upgraded nodes' slot times (admitted to back in service). */
export function learnSlotSeconds(previous: number | undefined, heldSeconds: readonly number[]): number | undefined {
  let estimate = previous;
  for (const s of heldSeconds) estimate = estimate === undefined ? s : 0.8 * estimate + 0.2 * s;
  return estimate;
}
