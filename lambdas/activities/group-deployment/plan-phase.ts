import { isDeploymentWindingDown } from '../../../ports/deployment-store';
import { groupRunState } from '../../../core/group-deployment';
import { batchesPerPage } from '../../../core/group-deployment/batch-pages';
import type { GroupDeploymentDependencies } from './dependencies';
import { loadRun } from './run-state';
import { batchesOf, isPhaseDue, type PhaseRef } from './phase-batches';

export interface PhasePlan extends PhaseRef {
  /** The group is not where this phase starts (a replay): nothing to do. */
  skip: boolean;
  batchCount: number;
  maxConcurrency: number;
  /** Batch index ranges, one child execution each, so that no execution nears the history quota. */
  pages: { first: number; last: number }[];
  /** The deploy phase runs the deployment's task graph over the group's nodes instead of the provisioner's batches. */
  taskGraph: boolean;
}

/**
 * The batch pages of a group's phase. No phase starts once the deployment is CANCELLING. A group a
 * dead run left PREPARED (taken up again by a resumed run, whose group workflow starts at PREPARE)
 * goes on with its deploy.
 */
export async function planPhase(event: PhaseRef, deps: GroupDeploymentDependencies): Promise<PhasePlan> {
  const run = await loadRun(deps, event.deploymentId);
  const resumedDeploy = event.phase === 'PREPARE' && groupRunState(run.record.state, event.group).stage === 'PREPARED';
  const ref: PhaseRef = { deploymentId: event.deploymentId, group: event.group, phase: resumedDeploy ? 'DEPLOY' : event.phase };
  if (isDeploymentWindingDown(run.record.status) || !isPhaseDue(run, event.group, ref.phase))
    return { ...ref, skip: true, batchCount: 0, maxConcurrency: 1, pages: [], taskGraph: false };
  if (ref.phase === 'DEPLOY' && run.record.settings.taskGraph) return { ...ref, skip: false, batchCount: 0, maxConcurrency: 1, pages: [], taskGraph: true };
  const work = batchesOf(run, event.group, ref.phase);
  const { settings } = run.record;
  const timeout = ref.phase === 'PREPARE' ? settings.prepareTimeoutSeconds : settings.deployTimeoutSeconds;
  const size = batchesPerPage(
    timeout,
    { pollIntervalSeconds: settings.pollIntervalSeconds, maxPollSeconds: deps.settings.maxPollSeconds },
    deps.settings.batchesPerPage,
  );
  const pages: PhasePlan['pages'] = [];
  for (let first = 0; first < work.batches.length; first += size) {
    pages.push({ first, last: Math.min(first + size, work.batches.length) - 1 });
  }
  return { ...ref, skip: false, batchCount: work.batches.length, maxConcurrency: work.maxConcurrency, pages, taskGraph: false };
}
