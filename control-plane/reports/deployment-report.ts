import { summarizeDeployment, type DeploymentStage, type GroupRunResult } from '../../core/group-deployment';
import type { DeploymentRecord, DeploymentStatus, DeploymentStore } from '../../ports/deployment-store';

export type GroupReport = GroupRunResult;

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
  const { criticalGroupsFailed, failedCriticalGroups, groups, nodes } = summarizeDeployment(await store.getPlan(record.deploymentId), record.state);
  return { deploymentId: record.deploymentId, status: record.status, criticalGroupsFailed, failedCriticalGroups, groups, nodes };
}
