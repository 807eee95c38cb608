/** A node as the lower bound sees it: when it can first go out of service, and how long it must stay out. */
export interface BoundNode {
  /** Seconds from the start until its initial job ends (0 when idle). */
  releaseSeconds: number;
  /** Seconds it holds a slot: boot + return (boot only for a node whose boot fails). */
  holdSeconds: number;
}

/**
 * Makespan of the earliest-release-first list schedule of jobs with equal processing time `hold`
 * on `slots` parallel machines: job i (in release order) starts at max(r_i, end of job i - slots),
 * because with equal processing times the machines free up in the order they were taken.
 * For P | r_j, p_j = p | Cmax this schedule is optimal.
 */
export function listScheduleMakespan(releases: readonly number[], slots: number, hold: number): number {
  if (!(slots >= 1)) throw new RangeError(`slots must be at least 1, got ${slots}`);
  const sorted = [...releases].sort((a, b) => a - b);
  const ends: number[] = [];
  let makespan = 0;
  sorted.forEach((release, i) => {
    const start = Math.max(release, i >= slots ? ends[i - slots]! : 0);
    ends.push(start + hold);
    makespan = Math.max(makespan, start + hold);
  });
  return makespan;
}

/**
 * A lower bound on the makespan of any rolling upgrade of `nodes` with at most `slots` nodes out
 * of service at once (see bench/README.md): the larger of the optimal list schedule with every
 * node holding its slot for the shortest hold, and the latest release plus that node's own hold.
 */
export function makespanLowerBound(nodes: readonly BoundNode[], slots: number): number {
  if (nodes.length === 0) return 0;
  const shortest = Math.min(...nodes.map((n) => n.holdSeconds));
  const scheduled = listScheduleMakespan(
    nodes.map((n) => n.releaseSeconds),
    slots,
    shortest,
  );
  const latest = Math.max(...nodes.map((n) => n.releaseSeconds + n.holdSeconds));
  return Math.max(scheduled, latest);
}
