import { groupRunState, nodeRunStage, plannedGroup, type CriterionFailure, type DeploymentStage } from '../../core/group-deployment';
import type { DeploymentRecord, DeploymentStatus, DeploymentStore } from '../../ports/deployment-store';

export interface GroupReport {
  stage: DeploymentStage;
  critical: boolean;
  nodes: readonly string[];
  failures: readonly CriterionFailure[];
  /** The failed group this one depends on, when that is why it failed. */
  blockedBy?: string;
  /** What broke the group's workflow, when that is why it failed (not its nodes). */
  cause?: string;
}

/** A deployment as `rollout deploy --json` prints it; readable during the run as after it. */
export interface DeploymentReport {
  deploymentId: string;
  status: DeploymentStatus;
  criticalGroupsFailed: boolean;
  failedCriticalGroups: string[];
  groups: Record<string, GroupReport>;
  nodes: Record<string, DeploymentStage>;
}

export async function buildDeploymentReport(store: DeploymentStore, record: DeploymentRecord): Promise<DeploymentReport> {
  const plan = await store.getPlan(record.deploymentId);
  const groups: Record<string, GroupReport> = {};
  const failedCriticalGroups: string[] = [];
  for (const name of plan.order) {
    const { critical, nodes } = plannedGroup(plan, name);
    const { stage, failures, blockedBy, cause } = groupRunState(record.state, name);
    groups[name] = { stage, critical, nodes, failures, ...(blockedBy === undefined ? {} : { blockedBy }), ...(cause === undefined ? {} : { cause }) };
    if (critical && stage === 'FAILED') failedCriticalGroups.push(name);
  }
  return {
    deploymentId: record.deploymentId,
    status: record.status,
    criticalGroupsFailed: failedCriticalGroups.length > 0,
    failedCriticalGroups,
    groups,
    nodes: Object.fromEntries(plan.nodes.map((node) => [node, nodeRunStage(record.state, node)])),
  };
}
