import { DeploymentNotFoundError, StaleWriteError } from '../../../core/errors';
import type { DeploymentPlan, DeploymentRunState } from '../../../core/group-deployment';
import type { DeploymentRecord } from '../../../ports/deployment-store';
import type { GroupDeploymentDependencies } from './dependencies';

export interface RunSnapshot {
  record: DeploymentRecord;
  plan: DeploymentPlan;
}

export async function loadRun(deps: GroupDeploymentDependencies, deploymentId: string): Promise<RunSnapshot> {
  const record = await deps.store.getDeployment(deploymentId);
  if (!record) throw new DeploymentNotFoundError(deploymentId);
  return { record, plan: await deps.store.getPlan(deploymentId) };
}

/**
 * Applies `change` to the run state with an optimistic write: groups that run at once change the
 * state concurrently, so a write that lost the race re-reads and applies its change again.
 */
export async function updateRunState(
  deps: GroupDeploymentDependencies,
  deploymentId: string,
  change: (plan: DeploymentPlan, state: DeploymentRunState) => DeploymentRunState,
  attempts = 20,
): Promise<DeploymentRunState> {
  for (let attempt = 1; ; attempt++) {
    const { record, plan } = await loadRun(deps, deploymentId);
    const next = change(plan, record.state);
    if (next === record.state) return next;
    try {
      await deps.store.saveState(deploymentId, record.version, next);
      return next;
    } catch (err) {
      if (!(err instanceof StaleWriteError) || attempt >= attempts) throw err;
    }
  }
}
