/** What a run's state says of the deployment: Shipyard's group and node summaries, and whether the deployment failed. */
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
  /** The failed group this one depends on, when that is why it failed. */
  blockedBy?: string;
  /** What broke the group's workflow, when that is why it failed (not its nodes). */
  cause?: string;
}

/**
 * The deployment as its run state shows it, during the run as after it: the one place the report
 * (`rollout deploy --json`, GET /deployments/{id}), Finish Deployment and the tests read it from.
 */
export interface DeploymentSummary {
  /** Whether a critical group FAILED: such a deployment fails (failed non-critical groups still let it succeed). */
  criticalGroupsFailed: boolean;
  /** Those critical groups, in deployment order. */
  failedCriticalGroups: string[];
  /** In deployment order. */
  groups: Record<string, GroupRunResult>;
  /** Nodes that only sat in groups that never ran stay NOT_STARTED. */
  nodes: Record<string, DeploymentStage>;
  /** Groups still NOT_STARTED or PREPARED, in deployment order: the run has not finished while there are any. */
  unfinishedGroups: string[];
}

export function summarizeDeployment(plan: DeploymentPlan, state: DeploymentRunState): DeploymentSummary {
  // Entries, not assignments: a group may be called __proto__.
  const groups = plan.order.map((name): [string, GroupRunResult] => {
    const { critical, nodes } = plannedGroup(plan, name);
    const { stage, failures, blockedBy, cause } = groupRunState(state, name);
    return [name, { stage, critical, nodes, failures, ...(blockedBy === undefined ? {} : { blockedBy }), ...(cause === undefined ? {} : { cause }) }];
  });
  const failedCriticalGroups = groups.filter(([, group]) => group.critical && group.stage === 'FAILED').map(([name]) => name);
  const unfinishedGroups = groups.filter(([, group]) => group.stage === 'NOT_STARTED' || group.stage === 'PREPARED').map(([name]) => name);
  return {
    criticalGroupsFailed: failedCriticalGroups.length > 0,
    failedCriticalGroups,
    groups: Object.fromEntries(groups),
    nodes: Object.fromEntries(plan.nodes.map((node) => [node, nodeRunStage(state, node)])),
    unfinishedGroups,
  };
}

/** The end of a run that was not cancelled or stopped: its outcome, and the line the workflow's Fail state (or its output) carries. */
export interface DeploymentRunResult extends Omit<DeploymentSummary, 'unfinishedGroups'> {
  /** FAILED when any critical group failed. */
  status: 'SUCCEEDED' | 'FAILED';
  cause: string;
}

/** Throws DeploymentRunNotFinishedError while a group is still NOT_STARTED or PREPARED. */
export function summarizeDeploymentRun(plan: DeploymentPlan, state: DeploymentRunState): DeploymentRunResult {
  const { unfinishedGroups, ...summary } = summarizeDeployment(plan, state);
  if (unfinishedGroups.length > 0) throw new DeploymentRunNotFinishedError(unfinishedGroups);
  return {
    status: summary.criticalGroupsFailed ? 'FAILED' : 'SUCCEEDED',
    cause: summary.criticalGroupsFailed ? `Critical groups failed: ${summary.failedCriticalGroups.join(', ')}` : 'Every critical group deployed',
    ...summary,
  };
}
