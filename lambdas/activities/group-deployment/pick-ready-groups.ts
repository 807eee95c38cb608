import { groupsToStart } from '../../../core/group-deployment';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';
import type { GroupDeploymentDependencies } from './dependencies';
import { loadRun } from './run-state';
import type { DeploymentPointer } from './start-deployment';

export interface ReadyGroups extends DeploymentPointer {
  ready: string[];
  done: boolean;
}

/**
 * The groups to run in the next round: ready ones, in plan order, at most maxParallelGroups, and
 * only those whose shared nodes are settled. None left means the run is over.
 */
export async function pickReadyGroups(event: DeploymentPointer, deps: GroupDeploymentDependencies): Promise<ReadyGroups> {
  const { record, plan } = await loadRun(deps, event.deploymentId);
  const ready = groupsToStart(plan, record.state, event.maxParallelGroups);
  const at = eventTime(deps.clock.now());
  await publishStatusEvents(
    deps,
    ready.map((group) => statusEvent(DETAIL_TYPES.groupStarted, { kind: 'deployment', sessionId: event.deploymentId, at, group }, `group-${group}`)),
  );
  return { deploymentId: event.deploymentId, maxParallelGroups: event.maxParallelGroups, ready, done: ready.length === 0 };
}
