import { isDeploymentWindingDown } from '../../../ports/deployment-store';
import { groupsToStart, interruptedGroups } from '../../../core/group-deployment';
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
 * only those whose shared nodes are settled. None left means the run is over; so does a cancel
 * request (no group starts after it). A resumed run first takes up the groups its dead run left
 * PREPARED (their deploy is next; a round always ends with its groups DEPLOYED or FAILED).
 */
export async function pickReadyGroups(event: DeploymentPointer, deps: GroupDeploymentDependencies): Promise<ReadyGroups> {
  const { record, plan } = await loadRun(deps, event.deploymentId);
  if (isDeploymentWindingDown(record.status)) return { deploymentId: event.deploymentId, maxParallelGroups: event.maxParallelGroups, ready: [], done: true };
  const interrupted = interruptedGroups(plan, record.state).slice(0, event.maxParallelGroups);
  const ready = [...interrupted, ...groupsToStart(plan, record.state, event.maxParallelGroups - interrupted.length)];
  const at = eventTime(deps.clock.now());
  await publishStatusEvents(
    deps,
    ready.map((group) => statusEvent(DETAIL_TYPES.groupStarted, { kind: 'deployment', sessionId: event.deploymentId, at, group }, `group-${group}`)),
  );
  return { deploymentId: event.deploymentId, maxParallelGroups: event.maxParallelGroups, ready, done: ready.length === 0 };
}
