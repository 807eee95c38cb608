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
}

export async function planPhase(event: PhaseRef, deps: GroupDeploymentDependencies): Promise<PhasePlan> {
  const run = await loadRun(deps, event.deploymentId);
  const ref: PhaseRef = { deploymentId: event.deploymentId, group: event.group, phase: event.phase };
  if (!isPhaseDue(run, event.group, event.phase)) return { ...ref, skip: true, batchCount: 0, maxConcurrency: 1, pages: [] };
  const work = batchesOf(run, event.group, event.phase);
  const { settings } = run.record;
  const timeout = event.phase === 'PREPARE' ? settings.prepareTimeoutSeconds : settings.deployTimeoutSeconds;
  const size = batchesPerPage(timeout, { pollIntervalSeconds: settings.pollIntervalSeconds, maxPollSeconds: deps.settings.maxPollSeconds }, deps.settings.batchesPerPage);
  const pages: PhasePlan['pages'] = [];
  for (let first = 0; first < work.batches.length; first += size) {
    pages.push({ first, last: Math.min(first + size, work.batches.length) - 1 });
  }
  return { ...ref, skip: false, batchCount: work.batches.length, maxConcurrency: work.maxConcurrency, pages };
}
