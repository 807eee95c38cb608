import { readyGroups } from '../../../domain/group-deployment';
import type { GroupDeploymentDependencies } from '../dependencies';
import { loadRun } from '../run-state';
import type { DeploymentPointer } from './start-deployment';

export interface ReadyGroups extends DeploymentPointer {
  ready: string[];
  done: boolean;
}

/** The groups whose dependencies are all deployed, in deployment order; none left means the run is over. */
export async function pickReadyGroups(event: DeploymentPointer, deps: GroupDeploymentDependencies): Promise<ReadyGroups> {
  const { record, plan } = await loadRun(deps, event.deploymentId);
  const ready = readyGroups(plan, record.state);
  return { deploymentId: event.deploymentId, maxParallelGroups: event.maxParallelGroups, ready, done: ready.length === 0 };
}
