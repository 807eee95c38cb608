import { decideStartStep } from '../../../core/rolling-upgrade/step-decisions';
import { decideStartWindow } from '../../../core/rolling-upgrade/window-decisions';
import { activeNodes } from '../../../core/rolling-upgrade/stage-decision';
import { stepCount } from '../../../core/rolling-upgrade/step-plan';
import type { UpgradeSession } from '../../../core/rolling-upgrade/session';
import { InvalidInputError } from '../../../core/errors';
import { NODE_NAME_PATTERN, NODE_NAME_RULE } from '../../../core/site/names';
import type { RollingUpgradeDependencies } from './dependencies';
import { applyDecision } from './apply-decision';
import { loadStepNodes, lockAllOrNone, observeWlm } from './observe';
import type { ActivityBody } from './activity-runner';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';

/** The plan snapshot (the starting group's members, in order), taken once, at step 0. */
async function withPlan(deps: RollingUpgradeDependencies, session: UpgradeSession): Promise<UpgradeSession> {
  if (session.planTaken) return session;
  const plan = await deps.site.inventory.getGroupMembers(session.startingLabel);
  // A name that cannot be a node ('..', 5,000 characters) is refused before any node is touched.
  const bad = plan.flatMap((name, i) => (NODE_NAME_PATTERN.test(name) ? [] : [{ field: `${session.startingLabel}[${i}]`, message: `${JSON.stringify(name.slice(0, 80))} is not a valid node name: ${NODE_NAME_RULE}` }]));
  if (bad.length > 0) throw new InvalidInputError(`members of group '${session.startingLabel}'`, bad);
  await deps.store.savePlan(session.upgradeId, plan);
  return { ...session, planTaken: true, nodeCount: plan.length, stepCount: stepCount(plan.length, session.upgradeStepSize) };
}

/** STARTING: take the plan; mode window goes on to ROLLING; lock-step locks the step's nodes (all or none), observe them, then drain (core: decideStartStep). */
export const startStep: ActivityBody = async ({ session, progress, deps, now }) => {
  const planned = await withPlan(deps, session);
  const failedMembers = progress.step === 0 ? await deps.site.inventory.getGroupMembers(planned.failedLabel) : [];
  // Every label the session uses exists before any node is drained (a missing group is retried, CRUS's way, with a message).
  if (progress.step === 0) await deps.site.inventory.getGroupMembers(planned.upgradingLabel);
  if (planned.mode === 'window') return applyDecision(deps, planned, decideStartWindow(planned, progress, failedMembers, now));
  const step = progress.step < planned.stepCount ? activeNodes(await loadStepNodes(deps, planned, progress.step)) : [];
  const { heldByOthers, locked } = await lockAllOrNone(deps, planned, step);
  const nodes = heldByOthers.size === 0 ? locked : step;
  const wlm = heldByOthers.size === 0 ? await observeWlm(deps, planned, nodes) : new Map();
  const outcome = await applyDecision(deps, planned, decideStartStep({ session: planned, progress, nodes, observed: { failedMembers, heldByOthers, wlm }, now }), nodes);
  if (outcome.progress.stage !== 'STARTING' && outcome.progress.step === progress.step && progress.step < planned.stepCount) {
    await publishStatusEvents(deps, [
      statusEvent(DETAIL_TYPES.stepStarted, { kind: 'upgrade', sessionId: planned.upgradeId, at: eventTime(now), step: progress.step, stepCount: planned.stepCount, nodeCount: nodes.length }, `step-${progress.step}`),
    ]);
  }
  return outcome;
};
