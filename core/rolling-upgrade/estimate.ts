import type { NodeRecord, Progress, UpgradeSession } from './session';
import { planUpgrade, type PlannedNodeSite } from './upgrade-plan';

/**
 * When the session should end: the plan (core/rolling-upgrade/upgrade-plan.ts, what `rollout plan
 * upgrade` shows) made again from the site as it is now, over the nodes left, with each node's
 * reboot and return as long as the run has seen it take. Written when the counts change (a step
 * ends, window nodes leave flight), so a display reads it off the session item; none before a node
 * is back or after the last.
 */

/** From a node's boot to back in service, the longest the upgraded nodes among `records` took (their phase times), in seconds. */
export function observedServiceSeconds(records: readonly NodeRecord[]): number | undefined {
  const seen = records.flatMap((r) => {
    const times = r.phaseTimes;
    return r.status === 'UPGRADED' && times?.BOOTING !== undefined && times.DONE !== undefined ? [(times.DONE - times.BOOTING) / 1000] : [];
  });
  return seen.length > 0 ? Math.max(...seen) : undefined;
}

export interface RunEstimateInput {
  session: UpgradeSession;
  /** The progress as the increment saves it: its counts, a window's wave. */
  progress: Progress;
  /** The nodes not done yet, in the order they will start: those in flight first (each starts again now, as the plan counts it). */
  left: readonly string[];
  /** What the site says of them now. */
  site: ReadonlyMap<string, PlannedNodeSite>;
  /** A node's boot to back in service, as observed so far. */
  serviceSeconds: number;
  now: number;
}

export function estimateEnd({ session, progress, left, site, serviceSeconds, now }: RunEstimateInput): Progress['estimate'] {
  const done = (progress.counts?.upgraded ?? 0) + (progress.counts?.failed ?? 0);
  if (done === 0 || done >= session.nodeCount || left.length === 0) return undefined;
  // A window's batches already opened are behind it: the nodes left go in the batches still to come, then the rest.
  const wave = progress.window?.wave ?? -1;
  const request = session.mode === 'window' ? { ...session, batches: (session.batches ?? []).slice(wave + 1) } : session;
  const plan = planUpgrade({ request, plan: left, site, now, serviceSeconds });
  return {
    endsAt: plan.endsAt,
    basis: `the plan made again with ${done} of ${session.nodeCount} node(s) done: ${left.length} left, each back ${Math.round(serviceSeconds)} s after its boot (as observed)`,
  };
}
