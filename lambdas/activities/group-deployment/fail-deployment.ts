import { plannedGroup } from '../../../core/group-deployment';
import { executionErrorLine } from '../../../core/execution-error';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { isDeploymentEnded, type DeploymentStatus } from '../../../ports/deployment-store';
import { sayOnce } from '../node-claims';
import { eventTime, publishStatusEvents } from '../status-events';
import type { GroupDeploymentDependencies } from './dependencies';

/** What Record Failure hands the function: the deployment and the error its state caught. */
export interface FailDeploymentEvent {
  deploymentId: string;
  error?: { Error?: unknown; Cause?: unknown };
}

export interface FailedDeployment {
  deploymentId: string;
  /** FAILED, or the status it had already ended in; absent when no deployment was stored under the id. */
  status?: DeploymentStatus;
}

/**
 * An error Pick Ready Groups, the group Map or Finish Deployment could not absorb (their retries ran
 * out): the deployment is marked FAILED with it, as Fail Environment Upgrade marks its session, so it
 * never stays RUNNING in the store with nothing working on it. Its node locks go back, a message says
 * what broke it, and the finished event carries the same line. One that already ended is left as it is.
 */
export async function failDeployment(event: FailDeploymentEvent, deps: GroupDeploymentDependencies): Promise<FailedDeployment> {
  const { deploymentId } = event;
  const record = await deps.store.getDeployment(deploymentId);
  if (!record) return { deploymentId };
  if (isDeploymentEnded(record.status)) return { deploymentId, status: record.status };
  const cause = `Deployment failed: ${executionErrorLine(event.error)}`;
  // Message and locks before the status: a retry after a partial write does the rest (the message once).
  await sayOnce(deps.store.messages, deploymentId, cause);
  const plan = await deps.store.getPlan(deploymentId);
  await deps.locks.releaseNodeLocks(
    deploymentId,
    plan.order.flatMap((name) => plannedGroup(plan, name).actionableNodes),
  );
  await deps.store.setStatus(deploymentId, 'FAILED');
  await publishStatusEvents(deps, [
    statusEvent(
      DETAIL_TYPES.sessionFinished,
      { kind: 'deployment', sessionId: deploymentId, at: eventTime(deps.clock.now()), outcome: 'FAILED', state: 'FAILED', detail: cause },
      'session',
    ),
  ]);
  return { deploymentId, status: 'FAILED' };
}
