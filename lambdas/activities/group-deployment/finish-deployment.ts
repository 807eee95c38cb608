import { plannedGroup, summarizeCancelledRun, summarizeDeployment, summarizeDeploymentRun } from '../../../core/group-deployment';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';
import type { GroupDeploymentDependencies } from './dependencies';
import { loadRun } from './run-state';

export interface DeploymentOutcome {
  deploymentId: string;
  status: 'SUCCEEDED' | 'FAILED' | 'CANCELLED' | 'STOPPED';
  /** As in the deployment's report: whether a critical group failed, and which (core/group-deployment/deployment-run-result.ts). */
  criticalGroupsFailed: boolean;
  failedCriticalGroups: string[];
  /** For the workflow's Fail state: names the critical groups that failed (a cancelled run: what it left undone). */
  cause: string;
}

/**
 * After every group was handled: the run fails if a critical group failed. A cancelled run
 * (CANCELLING: no group started after the request) ends CANCELLED, naming the groups it left.
 */
export async function finishDeployment(event: { deploymentId: string }, deps: GroupDeploymentDependencies): Promise<DeploymentOutcome> {
  const { record, plan } = await loadRun(deps, event.deploymentId);
  let outcome: DeploymentOutcome;
  if (record.status === 'CANCELLING' || record.status === 'CANCELLED' || record.status === 'STOPPING' || record.status === 'STOPPED') {
    const { criticalGroupsFailed, failedCriticalGroups } = summarizeDeployment(plan, record.state);
    // A stopped run ends STOPPED (a resume carries it on), a cancelled one CANCELLED.
    const stopped = record.status === 'STOPPING' || record.status === 'STOPPED';
    const { cause } = summarizeCancelledRun(plan, record.state);
    outcome = {
      deploymentId: event.deploymentId,
      status: stopped ? 'STOPPED' : 'CANCELLED',
      criticalGroupsFailed,
      failedCriticalGroups,
      cause: stopped ? cause.replace(/^Deployment cancelled/, 'Deployment stopped') : cause,
    };
  } else {
    const { status, criticalGroupsFailed, failedCriticalGroups, cause } = summarizeDeploymentRun(plan, record.state);
    outcome = { deploymentId: event.deploymentId, status, criticalGroupsFailed, failedCriticalGroups, cause };
  }
  // Every lock the deployment may still hold goes back with its end (a group its cancel cut short, say).
  await deps.locks.releaseNodeLocks(
    event.deploymentId,
    plan.order.flatMap((name) => plannedGroup(plan, name).actionableNodes),
  );
  await deps.store.setStatus(event.deploymentId, outcome.status);
  await publishStatusEvents(deps, [
    statusEvent(
      DETAIL_TYPES.sessionFinished,
      {
        kind: 'deployment',
        sessionId: event.deploymentId,
        at: eventTime(deps.clock.now()),
        outcome: outcome.status === 'SUCCEEDED' ? 'COMPLETED' : outcome.status,
        state: outcome.status,
        detail: outcome.cause,
      },
      'session',
    ),
  ]);
  return outcome;
}
