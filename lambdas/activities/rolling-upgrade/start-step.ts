import { decideStartStep } from '../../../core/rolling-upgrade/step-decisions';
import { decideStartWindow } from '../../../core/rolling-upgrade/window-decisions';
import { activeNodes } from '../../../core/rolling-upgrade/stage-decision';
import { stepCount } from '../../../core/rolling-upgrade/step-plan';
import type { UpgradeSession } from '../../../core/rolling-upgrade/session';
import { InvalidInputError } from '../../../core/errors';
import { NODE_NAME_PATTERN, NODE_NAME_RULE } from '../../../core/site/names';
import type { RollingUpgradeDependencies } from './dependencies';
import { performDecision } from './perform-decision';
import { loadStepNodes, lockAllOrNone, observeWlm } from './observe';
import type { StageIncrement } from './activity-runner';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';
import { bootSetGroups, nodesOutsideBootSets } from '../../../core/rolling-upgrade/boot-sets';
import { FailureReason, type NodeRecord } from '../../../core/rolling-upgrade/session';
import { withMarks, Mark } from '../../../core/rolling-upgrade/plan-marks';
import { shortList } from '../../../core/text';
import { GroupNotFoundError } from '../../../core/errors';
import { readInventoryNodes } from '../inventory-nodes';

/** The plan snapshot (the starting group's members, in order), taken once, at step 0. */
async function withPlan(deps: RollingUpgradeDependencies, session: UpgradeSession): Promise<UpgradeSession> {
  if (session.planTaken) return session;
  const plan = await deps.site.inventory.getGroupMembers(session.startingLabel);
  // A name that cannot be a node ('..', 5,000 characters) is refused before any node is touched.
  const bad = plan.flatMap((name, i) =>
    NODE_NAME_PATTERN.test(name)
      ? []
      : [{ field: `${session.startingLabel}[${i}]`, message: `${JSON.stringify(name.slice(0, 80))} is not a valid node name: ${NODE_NAME_RULE}` }],
  );
  if (bad.length > 0) throw new InvalidInputError(`members of group '${session.startingLabel}'`, bad);
  // One node, two names: the workload manager's names are kept beside the plan's, for every report to show both.
  const wlmNames = deps.site.nodeNames ? await deps.site.nodeNames.toWorkloadManager(plan) : undefined;
  await deps.store.savePlan(session.upgradeId, plan, wlmNames ? plan.map((name) => wlmNames.get(name) ?? '') : undefined);
  return { ...session, planTaken: true, nodeCount: plan.length, stepCount: stepCount(plan.length, session.upgradeStepSize) };
}

/**
 * The plan's nodes the boot service would not reboot (BOS: outside the template's boot sets, or
 * disabled in HSM), with their plan positions: read once, at step 0, before any node is drained.
 * Nothing when the boot service does not decide by boot sets.
 */
async function outsideBootSets(deps: RollingUpgradeDependencies, session: UpgradeSession): Promise<NodeRecord[]> {
  const bootSets = await deps.site.bootService.templateBootSets?.(session.upgradeTemplateId);
  if (!bootSets || session.nodeCount === 0) return [];
  const plan = await deps.store.getPlanSlice(session.upgradeId, 0, session.nodeCount);
  const labels = bootSetGroups(bootSets);
  const [nodes, members] = await Promise.all([
    // The plan's nodes alone: their role, subrole and enabled.
    readInventoryNodes(deps.site.inventory, plan),
    // A boot set's group that does not exist adds no node (BOS logs "No hardware matching label" and goes on).
    Promise.all(
      labels.map((label) => deps.site.inventory.getGroupMembers(label).catch((err: unknown) => (err instanceof GroupNotFoundError ? [] : Promise.reject(err)))),
    ),
  ]);
  const outside = nodesOutsideBootSets(plan, bootSets, {
    groupMembers: new Map(labels.map((label, i) => [label.toLowerCase(), new Set(members[i])])),
    nodes: new Map(
      [...nodes.values()].map((n) => [n.name, { role: n.role, ...(n.labels.subrole ? { subrole: n.labels.subrole } : {}), enabled: n.available !== false }]),
    ),
  });
  return plan.flatMap((name, index): NodeRecord[] =>
    outside.has(name) ? [{ name, index, status: 'FAILED', phase: 'DONE', reason: FailureReason.notInBootSet }] : [],
  );
}

/**
 * Fails the nodes BOS would not reboot, at once and before any drain: recorded FAILED with
 * `upgrading-not-in-boot-set` and put in the failed group. Slurm is not touched (the node was never
 * drained; failing it there would take a healthy node out of service). Safe to repeat.
 */
async function failOutsideBootSets(deps: RollingUpgradeDependencies, session: UpgradeSession, records: readonly NodeRecord[]): Promise<void> {
  if (records.length === 0) return;
  await deps.store.putNodes(session.upgradeId, records);
  await deps.site.inventory.addGroupMembers(
    session.failedLabel,
    records.map((r) => r.name),
  );
  // The store adds Slurm's names of the nodes a message names (node-names.ts).
  const shown = shortList(records.map((r) => r.name));
  await deps.store.messages.append(
    session.upgradeId,
    `${records.length} node(s) failed with ${FailureReason.notInBootSet} before any drain: the boot sets of template ${session.upgradeTemplateId} would not reboot them (outside node_list, node_groups and node_roles_groups, or disabled in HSM): ${shown}`,
  );
}

/** STARTING: take the plan; mode window goes on to ROLLING; lock-step locks the step's nodes (all or none), observe them, then drain (core: decideStartStep). */
export const startStep: StageIncrement = async ({ session, progress, deps, now, locks }) => {
  const planned = await withPlan(deps, session);
  // The nodes the boot service would skip fail first, each retry of step 0 again (idempotent), so that none is ever drained.
  const skipped = progress.step === 0 ? await outsideBootSets(deps, planned) : [];
  const skippedNames = new Set(skipped.map((r) => r.name));
  // Emptying the failed group (CRUS's start) keeps the nodes failed just now.
  const failedMembers = progress.step === 0 ? (await deps.site.inventory.getGroupMembers(planned.failedLabel)).filter((n) => !skippedNames.has(n)) : [];
  // Every label the session uses exists before any node is drained (a missing group is retried, CRUS's way, with a message).
  if (progress.step === 0) await deps.site.inventory.getGroupMembers(planned.upgradingLabel);
  if (failedMembers.length > 0 && skipped.length > 0) await deps.site.inventory.removeGroupMembers(planned.failedLabel, failedMembers);
  await failOutsideBootSets(deps, planned, skipped);
  if (planned.mode === 'window') {
    const decision = decideStartWindow(planned, progress, skipped.length > 0 ? [] : failedMembers, now);
    const window = decision.progress.window;
    // The window starts with those nodes marked failed and counted, so the scheduler never picks them.
    const started =
      window && skipped.length > 0
        ? {
            ...decision,
            progress: {
              ...decision.progress,
              window: { ...window, marks: withMarks(window.marks!, new Map(skipped.map((r) => [r.index, Mark.failed]))) },
              counts: { upgraded: 0, failed: skipped.length },
            },
          }
        : decision;
    return performDecision(deps, planned, started);
  }
  const step = progress.step < planned.stepCount ? activeNodes(await loadStepNodes(deps, planned, progress.step)) : [];
  const { heldByOthers, locked } = await lockAllOrNone(deps, planned, step);
  const nodes = heldByOthers.size === 0 ? locked : step;
  const wlm = heldByOthers.size === 0 ? await observeWlm(deps, planned, nodes) : new Map();
  const observed = { failedMembers: skipped.length > 0 ? [] : failedMembers, heldByOthers, wlm };
  const outcome = await performDecision(deps, planned, decideStartStep({ session: planned, progress, nodes, observed, now }), nodes, locks.renewedAt);
  if (outcome.progress.stage !== 'STARTING' && outcome.progress.step === progress.step && progress.step < planned.stepCount) {
    await publishStatusEvents(deps, [
      statusEvent(
        DETAIL_TYPES.stepStarted,
        { kind: 'upgrade', sessionId: planned.upgradeId, at: eventTime(now), step: progress.step + 1, stepCount: planned.stepCount, nodeCount: nodes.length },
        `step-${progress.step}`,
      ),
    ]);
  }
  return outcome;
};
