/** The end of a run: Shipyard's group and node summaries, and whether the deployment failed. */
import { plannedGroup, type DeploymentPlan } from './deployment-plan';
import { groupRunState, nodeRunStage, type DeploymentRunState } from './deployment-run-state';
import { DeploymentRunNotFinishedError } from '../errors';
import type { DeploymentStage } from './stages';
import type { CriterionFailure } from './success-criteria';

export interface GroupRunResult {
  stage: DeploymentStage;
  critical: boolean;
  nodes: readonly string[];
  failures: readonly CriterionFailure[];
  blockedBy?: string;
  cause?: string;
}

export interface DeploymentRunResult {
  /** FAILED when any critical group failed; failed non-critical groups still let it succeed. */
  status: 'SUCCEEDED' | 'FAILED';
  criticalGroupsFailed: string[];
  /** In deployment order. */
  groups: Record<string, GroupRunResult>;
  /** Nodes that only sat in groups that never ran stay NOT_STARTED. */
  nodes: Record<string, DeploymentStage>;
}

/** Throws DeploymentRunNotFinishedError while a group is still NOT_STARTED or PREPARED. */
export function summarizeDeploymentRun(plan: DeploymentPlan, state: DeploymentRunState): DeploymentRunResult {
  const pending = plan.order.filter((name) => {
    const stage = groupRunState(state, name).stage;
    return stage === 'NOT_STARTED' || stage === 'PREPARED';
  });
  if (pending.length > 0) throw new DeploymentRunNotFinishedError(pending);

  const groups = plan.order.map((name): [string, GroupRunResult] => {
    const { critical, nodes } = plannedGroup(plan, name);
    const { stage, failures, blockedBy, cause } = groupRunState(state, name);
    return [name, { stage, critical, nodes, failures, ...(blockedBy === undefined ? {} : { blockedBy }), ...(cause === undefined ? {} : { cause }) }];
  });
  const criticalGroupsFailed = groups.filter(([, g]) => g.critical && g.stage === 'FAILED').map(([name]) => name);
  return {
    status: criticalGroupsFailed.length > 0 ? 'FAILED' : 'SUCCEEDED',
    criticalGroupsFailed,
    groups: Object.fromEntries(groups),
    nodes: Object.fromEntries(plan.nodes.map((node) => [node, nodeRunStage(state, node)])),
  };
}
