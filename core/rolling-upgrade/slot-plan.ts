/**
 * Planned slots held by maintenance reservations (request `reserveSlots`, mode window). Each TODO
 * node gets the time its slot is expected to free, and a Slurm maintenance reservation on it from
 * then on: Slurm starts no job on the node whose time limit runs past that time (reservation.c), so
 * the node is idle when its slot comes instead of having picked up a day-long job meanwhile. The
 * plan is made again every increment; a node changes reservation only when its slot moved by more
 * than the tolerance, and leaves it when it starts (the drain holds it from then on) or the run stops
 * starting nodes. Pure: the increment (lambdas/activities/rolling-upgrade/advance-window.ts) reads
 * the site's reservations and applies the changes.
 */

export interface MaintenanceReservationView {
  name: string;
  nodes: string[];
  startsAt: number;
  endsAt: number;
}

/** Our reservations are named for the session: `rollout-<upgradeId>-<start, epoch s>` (an admin sees whose they are). */
export const reservationPrefix = (upgradeId: string) => `rollout-${upgradeId}-`;

/** Before any node of the run finished: the slot a node holds is taken to last this long (boot + return, typical). */
export const DEFAULT_SLOT_SECONDS = 900;

export interface SlotPlanInput {
  now: number;
  maxUnavailable: number;
  /** Expected seconds a node holds its slot (boot + return), learned from the run's nodes. */
  slotSeconds: number;
  /** Slot holders: when they took the slot (epoch ms). */
  holders: readonly { admittedAt: number }[];
  /**
   * TODO nodes in the order they would take a slot, each with when it can go out of service at the earliest (epoch ms): now when idle,
   * its job's time limit end when busy; Infinity for a job with no end (no limit), which no slot can be planned for.
   */
  todo: readonly { name: string; readyAt: number }[];
}

/**
 * Each TODO node's planned slot start: the earliest-ready-first list schedule over `maxUnavailable`
 * slots (bench/README: the lower bound's schedule), slots freeing `slotSeconds` after they were taken.
 * A node whose job never ends gets none.
 */
export function planSlots({ now, maxUnavailable, slotSeconds, holders, todo }: SlotPlanInput): Map<string, number> {
  const hold = slotSeconds * 1000;
  const free = holders
    .map((h) => Math.max(now, h.admittedAt + hold))
    .sort((a, b) => a - b)
    .slice(0, maxUnavailable);
  while (free.length < maxUnavailable) free.unshift(now);
  const ordered = [...todo].sort((a, b) => a.readyAt - b.readyAt);
  const plan = new Map<string, number>();
  // A small binary heap would do; the slots are few (maxUnavailable), so a sorted insert is enough.
  for (const node of ordered) {
    // A job that never ends: no slot to hold (a reservation `StartTime=now+Infinity` is refused, and failed every increment).
    if (!Number.isFinite(node.readyAt)) continue;
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
  /** Reservations whose nodes change (their times never do: Slurm cannot move one that has begun). */
  update: MaintenanceReservationView[];
  remove: string[];
}

/**
 * What to change at the site so that it holds the plan. Nodes share a reservation per slot bucket
 * (starts rounded down to `toleranceSeconds`), named for its start: `rollout-<upgradeId>-<epoch s>`,
 * so a 10,000-node plan is held by a few dozen reservations and one listing reads them all. A
 * bucket starts no earlier than the next increment can act (`leadSeconds`) and lasts two slots (a
 * run that dies leaves nothing held for long). A node stays in its reservation while its slot is
 * within the tolerance of the reservation's start (or, once it has begun, within the tolerance of
 * now); otherwise it moves to its bucket's. Empty reservations go, as do those of nodes no longer
 * planned (they started, or the run starts no node).
 */
export function reservationChanges(
  upgradeId: string,
  plan: ReadonlyMap<string, number>,
  existing: readonly MaintenanceReservationView[],
  { now, slotSeconds, leadSeconds, toleranceSeconds }: { now: number; slotSeconds: number; leadSeconds: number; toleranceSeconds: number },
): ReservationChanges {
  const bucketMs = Math.max(1, toleranceSeconds) * 1000;
  const holderOf = new Map<string, MaintenanceReservationView>();
  for (const r of existing) for (const node of r.nodes) if (!holderOf.has(node)) holderOf.set(node, r);
  const wanted = new Map<string, { startsAt: number; endsAt: number; nodes: string[] }>(
    existing.map((r) => [r.name, { startsAt: r.startsAt, endsAt: r.endsAt, nodes: [] }]),
  );
  for (const [node, slot] of plan) {
    const have = holderOf.get(node);
    const keep = have !== undefined && (have.startsAt <= now ? slot - now <= bucketMs : Math.abs(slot - have.startsAt) <= bucketMs);
    if (keep) {
      wanted.get(have.name)!.nodes.push(node);
      continue;
    }
    const bucket = Math.floor(slot / bucketMs) * bucketMs;
    const name = `${reservationPrefix(upgradeId)}${Math.round(bucket / 1000)}`;
    let target = wanted.get(name);
    if (!target) {
      const startsAt = Math.max(bucket, now + leadSeconds * 1000);
      target = { startsAt, endsAt: startsAt + 2 * slotSeconds * 1000, nodes: [] };
      wanted.set(name, target);
    }
    target.nodes.push(node);
  }
  const byName = new Map(existing.map((r) => [r.name, r]));
  const changes: ReservationChanges = { put: [], update: [], remove: [] };
  const sameNodes = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().join(',') === [...b].sort().join(',');
  for (const [name, want] of wanted) {
    const have = byName.get(name);
    if (want.nodes.length === 0) {
      if (have) changes.remove.push(name);
    } else if (!have) changes.put.push({ name, nodes: want.nodes, startsAt: want.startsAt, endsAt: want.endsAt });
    else if (!sameNodes(have.nodes, want.nodes)) changes.update.push({ ...have, nodes: want.nodes });
  }
  return changes;
}

/**
 * The slot length learned so far: a moving average of the upgraded nodes' slot times (admitted to
 * back in service), each time counted at most 1.5 x the estimate: a node that waited long in its
 * slot (a job it had picked up) says little of the next, and a long estimate spreads the plan (and
 * the makespan) out, while a short one only holds an idle node a little early.
 */
export function learnSlotSeconds(previous: number | undefined, heldSeconds: readonly number[]): number | undefined {
  let estimate = previous;
  for (const s of heldSeconds) estimate = estimate === undefined ? s : 0.8 * estimate + 0.2 * Math.min(s, 1.5 * estimate);
  return estimate;
}
