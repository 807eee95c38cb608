import { summarizeDeploymentRun } from '../../../core/group-deployment';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';
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
  const cause = failed.length > 0 ? `Critical groups failed: ${failed.join(', ')}` : 'Every critical group deployed';
  await publishStatusEvents(deps, [
    statusEvent(
      DETAIL_TYPES.sessionFinished,
      { kind: 'deployment', sessionId: event.deploymentId, at: eventTime(deps.clock.now()), outcome: result.status === 'SUCCEEDED' ? 'COMPLETED' : 'FAILED', state: result.status, detail: cause },
      'session',
    ),
  ]);
  return { deploymentId: event.deploymentId, status: result.status, criticalGroupsFailed: failed, cause };
}
