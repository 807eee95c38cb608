import { upgradePolicy, upgradeOpId } from '../../../core/rolling-upgrade/upgrade-policy';
import type { NodeRecord, Progress, UpgradeSession } from '../../../core/rolling-upgrade/session';
import { DEFAULT_SLOT_SECONDS, planSlots, reservationChanges, reservationPrefix } from '../../../core/rolling-upgrade/slot-plan';
import { isQuiet } from '../../../core/rolling-upgrade/wlm-readiness';
import type { Decision } from '../../../core/scheduling';
import { SiteServiceError } from '../../../core/errors';
import type { WlmNode } from '../../../core/site/site-nodes';
import type { MaintenanceReservations } from '../../../ports/reservations';
import type { RollingUpgradeDependencies } from './dependencies';

function reservationsOf(deps: RollingUpgradeDependencies): MaintenanceReservations {
  const reservations = deps.site.reservations;
  if (!reservations) throw new SiteServiceError('workload-manager', 'reserveSlots needs Slurm reservations through the head node, and this site has none');
  return reservations;
}

/**
 * reserveSlots: plan the slot of every TODO node looked at and make the site's reservations of the
 * session hold it (core/rolling-upgrade/slot-plan.ts). Nothing is held while the run starts no node
 * (finished, cancelled, paused, halted, waiting for an approval, a bake or a maintenance window):
 * then every reservation of the session goes.
 */
export async function holdPlannedSlots(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  input: {
    progress: Progress;
    decision: Decision;
    candidates: readonly NodeRecord[];
    inFlight: readonly NodeRecord[];
    wlm: ReadonlyMap<string, WlmNode>;
    jobEnds: ReadonlyMap<string, number> | undefined;
    now: number;
  },
): Promise<void> {
  const reservations = reservationsOf(deps);
  const { progress, decision, candidates, inFlight, wlm, jobEnds, now } = input;
  const policy = upgradePolicy(session, session.nodeCount);
  const slotSeconds = progress.window?.slotSeconds ?? DEFAULT_SLOT_SECONDS;
  const starting = new Set(decision.start.map((s) => s.op));
  const holding = progress.stage === 'ROLLING' && session.state !== 'DELETING' && !decision.finished && decision.wait === undefined;
  const todo = holding
    ? candidates
        .filter((r) => !starting.has(upgradeOpId(r.name)))
        .map((r) => {
          const node = wlm.get(r.name);
          const idle = node === undefined || node.base === 'IDLE' || isQuiet(node);
          return { name: r.name, readyAt: idle ? now : (jobEnds?.get(r.name) ?? now) };
        })
    : [];
  const holders = inFlight.filter((r) => r.op?.holdsSlot).map((r) => ({ admittedAt: r.op?.admittedAt ?? now }));
  for (const s of decision.start) if (s.holdsSlot) holders.push({ admittedAt: now });
  const plan = planSlots({ now, maxUnavailable: policy.maxInTransition, slotSeconds, holders, todo });
  const existing = await reservations.list(reservationPrefix(session.upgradeId));
  const changes = reservationChanges(session.upgradeId, plan, existing, {
    now,
    slotSeconds,
    leadSeconds: session.pollIntervalSeconds,
    toleranceSeconds: Math.max(session.pollIntervalSeconds, slotSeconds / 2),
  });
  await reservations.apply(changes);
}

/** reserveSlots: the session's reservations all go (it was cancelled, halted or cleaned up after). */
export async function releaseSlots(deps: RollingUpgradeDependencies, session: UpgradeSession): Promise<void> {
  if (!session.reserveSlots) return;
  const reservations = reservationsOf(deps);
  const existing = await reservations.list(reservationPrefix(session.upgradeId));
  await reservations.apply({ put: [], update: [], remove: existing.map((r) => r.name) });
}
