import { summarizeDeploymentRun } from '../../../core/group-deployment';
import type { GroupDeploymentDependencies } from './dependencies';
import { loadRun } from './run-state';

export interface DeploymentOutcome {
  deploymentId: string;
  status: 'SUCCEEDED' | 'FAILED';
  criticalGroupsFailed: string[];
  /** For the workflow's Fail state: names the critical groups that failed. */
  cause: string;
}

/** After every group was handled: the run fails if a critical group failed. */
export async function finishDeployment(event: { deploymentId: string }, deps: GroupDeploymentDependencies): Promise<DeploymentOutcome> {
  const { record, plan } = await loadRun(deps, event.deploymentId);
  const result = summarizeDeploymentRun(plan, record.state);
  await deps.store.setStatus(event.deploymentId, result.status);
  const failed = [...result.criticalGroupsFailed];
  return {
    deploymentId: event.deploymentId,
    status: result.status,
    criticalGroupsFailed: failed,
    cause: failed.length > 0 ? `Critical groups failed: ${failed.join(', ')}` : 'Every critical group deployed',
  };
}
