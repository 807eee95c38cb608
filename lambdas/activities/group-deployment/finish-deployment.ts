import { groupRunState, plannedGroup, summarizeDeploymentRun } from '../../../core/group-deployment';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';
import type { GroupDeploymentDependencies } from './dependencies';
import { loadRun } from './run-state';

export interface DeploymentOutcome {
  deploymentId: string;
  status: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  criticalGroupsFailed: string[];
  /** For the workflow's Fail state: names the critical groups that failed, or what a cancel left undone. */
  cause: string;
}

/** After every group was handled (or a cancel let the groups under way finish): the run's status. */
export async function finishDeployment(event: { deploymentId: string }, deps: GroupDeploymentDependencies): Promise<DeploymentOutcome> {
  const { record, plan } = await loadRun(deps, event.deploymentId);
  let outcome: Omit<DeploymentOutcome, 'deploymentId'>;
  if (record.status === 'CANCELLING' || record.status === 'CANCELLED') {
    // Groups keep the stage they reached: NOT_STARTED, or PREPARED when the cancel came between the phases.
    const undone = plan.order.filter((name) => ['NOT_STARTED', 'PREPARED'].includes(groupRunState(record.state, name).stage));
    const criticalGroupsFailed = plan.order.filter((name) => groupRunState(record.state, name).stage === 'FAILED' && plannedGroup(plan, name).critical);
    outcome = { status: 'CANCELLED', criticalGroupsFailed, cause: `Cancelled: ${undone.length > 0 ? `group(s) not deployed: ${undone.join(', ')}` : 'every group had finished'}` };
  } else {
    const result = summarizeDeploymentRun(plan, record.state);
    const failed = [...result.criticalGroupsFailed];
    outcome = { status: result.status, criticalGroupsFailed: failed, cause: failed.length > 0 ? `Critical groups failed: ${failed.join(', ')}` : 'Every critical group deployed' };
  }
  await deps.store.setStatus(event.deploymentId, outcome.status);
  const finishedAs = outcome.status === 'SUCCEEDED' ? 'COMPLETED' : outcome.status;
  await publishStatusEvents(deps, [
    statusEvent(
      DETAIL_TYPES.sessionFinished,
      { kind: 'deployment', sessionId: event.deploymentId, at: eventTime(deps.clock.now()), outcome: finishedAs, state: outcome.status, detail: outcome.cause },
      'session',
    ),
  ]);
  return { deploymentId: event.deploymentId, ...outcome };
}
