import { basePolicy, resolveCount, type OperationSpec, type SchedulingPolicy } from '../scheduling';
import type { UpgradeControls, UpgradeRequest } from './upgrade-request';

/** A rolling upgrade is one `upgrade` op per node of the plan, in plan order, with no dependencies. */
export function upgradeOperations(plan: readonly string[]): OperationSpec[] {
  return plan.map((node) => ({ id: upgradeOpId(node), node }));
}

export function upgradeOpId(node: string): string {
  return `${node}/upgrade`;
}

/** The node of an `upgrade` op (upgradeOpId's inverse). */
export function upgradeOpNode(opId: string): string {
  return opId.slice(0, -'/upgrade'.length);
}

type PolicyFields = UpgradeControls & Pick<UpgradeRequest, 'upgradeStepSize' | 'pollIntervalSeconds'>;

/**
 * The scheduling policy a request asks for, over a plan of `nodeCount` nodes (percentages are of
 * the plan). lockstep: CRUS's steps (waves of upgradeStepSize in plan order, all started together
 * once the previous step is done). window: the ramp's batches, then one wave for the rest, each
 * refilling up to maxUnavailable slots. Both: bake, approvals, failure budget, maintenance windows.
 */
export function upgradePolicy(request: PolicyFields, nodeCount: number): SchedulingPolicy {
  const shared = {
    approvalBeforeWaves: request.approval === 'each-batch' ? ('every' as const) : (request.pauseAfterBatches ?? []),
    bakeSeconds: request.bakeSeconds,
    ...(request.maxFailed === undefined ? {} : { maxFailedNodes: resolveCount(request.maxFailed, nodeCount, 0) }),
    haltOnOutsideFailures: request.haltOnOutsideFailures,
    maintenanceWindows: request.maintenanceWindows ?? [],
  };
  if (request.mode === 'lockstep') {
    return basePolicy({
      ...shared,
      admission: 'together',
      waveSizes: [request.upgradeStepSize],
      afterWaves: 'repeat-last',
      maxInTransition: request.upgradeStepSize,
    });
  }
  return basePolicy({
    ...shared,
    admission: 'refill',
    waveSizes: (request.batches ?? []).map((b) => resolveCount(b, nodeCount)),
    afterWaves: 'one-wave',
    maxInTransition: resolveCount(request.maxUnavailable ?? request.upgradeStepSize, nodeCount),
    drainAhead: request.drainAhead ?? 0,
    aheadHorizonSeconds: request.pollIntervalSeconds,
    order: request.order,
    ...(request.maxUnavailablePerRack === undefined ? {} : { maxPerRack: request.maxUnavailablePerRack }),
  });
}
