import { estimateEnd, observedServiceSeconds } from '../../../core/rolling-upgrade/estimate';
import { todoPositions } from '../../../core/rolling-upgrade/plan-marks';
import type { NodeRecord, Progress, UpgradeSession } from '../../../core/rolling-upgrade/session';
import { upgradePolicy } from '../../../core/rolling-upgrade/upgrade-policy';
import type { RollingUpgradeDependencies } from './dependencies';
import { loadWindowInFlight, planCacheOf } from './observe';
import { readPlanSite } from './plan-site';

/**
 * The ETA an increment writes with changed counts (core/rolling-upgrade/estimate.ts): the plan made
 * again over the nodes left, from the site as it is now (their job ends, states, racks) and the
 * reboot-and-return time the nodes just done took. Lock-step makes it at a step's end (nothing in
 * flight then); a window once as many nodes as it keeps out of service have been done since the
 * last time; either keeping it in between, and at most MOST_REPLANS times a run (replanEvery).
 */
export async function remadeEstimate(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  before: Progress,
  saved: Progress,
  /** Lock-step: the records of the step that just ended. */
  finishedStep: readonly NodeRecord[] | undefined,
  now: number,
): Promise<Progress['estimate']> {
  try {
    return await remake(deps, session, before, saved, finishedStep, now);
  } catch {
    // An ETA is advice: a site that could not be read for it keeps the last one, and the increment goes on (its own reads say what failed).
    return before.estimate;
  }
}

/**
 * Each re-plan reads the site's state of every node left (and its inventory): made every cap's (or
 * step's) worth of nodes done, a run of n nodes would read O(n²/cap) nodes at the site (10,000 nodes
 * at maxUnavailable 1: 10,000 re-plans). At most this many a run keeps it O(n), and the plan it
 * makes is as good: its end is an instant, which holds between two re-plans when the run keeps pace.
 */
export const MOST_REPLANS = 20;

/** The ETA is made again each time this many more nodes are done: a cap's (a step's) worth, or a MOST_REPLANS-th of the run if more. */
export function replanEvery(nodeCount: number, cap: number): number {
  return Math.max(1, cap, Math.ceil(nodeCount / MOST_REPLANS));
}

async function remake(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  before: Progress,
  saved: Progress,
  finishedStep: readonly NodeRecord[] | undefined,
  now: number,
): Promise<Progress['estimate']> {
  // A run cancelled, stopping or ending (all done, or halted on its failure budget) starts no more nodes: no end to plan.
  if (session.state !== 'UPDATING' || !session.planTaken || saved.stage === 'CLEANUP') return undefined;
  const done = (p: Progress) => (p.counts?.upgraded ?? 0) + (p.counts?.failed ?? 0);
  const every = replanEvery(session.nodeCount, session.mode === 'window' ? upgradePolicy(session, session.nodeCount).maxInTransition : session.upgradeStepSize);
  if (before.estimate && Math.floor(done(saved) / every) === Math.floor(done(before) / every)) return before.estimate;
  let left: string[];
  let service: number | undefined;
  if (session.mode === 'window') {
    const window = saved.window;
    if (!window?.marks) return before.estimate;
    // The nodes that left flight in this increment were in the index the increment found.
    service = observedServiceSeconds(await loadWindowInFlight(deps, session));
    const inFlight = window.inFlight ?? [];
    const positions = [...inFlight, ...todoPositions(window.marks, session.nodeCount, new Set(inFlight))];
    left = (await planCacheOf(deps).at(session, positions)).map((n) => n.name);
  } else {
    if (!finishedStep) return before.estimate;
    service = observedServiceSeconds(finishedStep);
    const from = Math.min(saved.step * session.upgradeStepSize, session.nodeCount);
    const positions = Array.from({ length: session.nodeCount - from }, (_, i) => from + i);
    left = (await planCacheOf(deps).at(session, positions)).map((n) => n.name);
  }
  if (left.length === 0) return undefined;
  if (service === undefined) return before.estimate;
  return estimateEnd({ session, progress: saved, left, site: await readPlanSite(deps.site, left), serviceSeconds: service, now });
}
