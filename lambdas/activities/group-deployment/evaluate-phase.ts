import {
  applyInterruptedPhase,
  applyPhaseResult,
  cascadeFailure,
  groupRunState,
  phaseNodes,
  type DeploymentStage,
} from '../../../core/group-deployment';
import { UnexpectedPhaseResultError } from '../../../core/errors';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';
import type { GroupDeploymentDependencies } from './dependencies';
import { loadRun, updateRunState } from './run-state';
import type { PhaseRef } from './phase-batches';

export interface PhaseOutcome extends PhaseRef {
  stage: DeploymentStage;
  /** DEPLOY: the group prepared well enough to deploy; DONE: it is deployed or failed. */
  next: 'DEPLOY' | 'DONE';
}

/**
 * Judges a phase: the batch results move the submitted nodes on or fail them, then the group's
 * success criteria are evaluated over all its nodes; a miss fails the group and its descendants.
 * Once the deployment is CANCELLING the group goes no further: a phase whose batches all ran is
 * judged as usual, one the cancel cut short records only the nodes its batches ran (the group keeps
 * its stage: it is not judged on work it never did).
 */
export async function evaluatePhase(event: PhaseRef, deps: GroupDeploymentDependencies): Promise<PhaseOutcome> {
  const cancelling = (await loadRun(deps, event.deploymentId)).record.status === 'CANCELLING';
  const results = await deps.store.listBatchResults(event.deploymentId, event.group, event.phase);
  const succeededNodes = results.flatMap((r) => r.succeeded);
  const failedNodes = results.flatMap((r) => r.failed);
  const reported = new Set([...succeededNodes, ...failedNodes]);
  const state = await updateRunState(deps, event.deploymentId, (plan, current) => {
    if (cancelling && !phaseNodes(plan, current, event.group, event.phase).every((node) => reported.has(node))) {
      return applyInterruptedPhase(plan, current, { group: event.group, phase: event.phase, succeededNodes, failedNodes });
    }
    try {
      return applyPhaseResult(plan, current, { group: event.group, phase: event.phase, succeededNodes });
    } catch (err) {
      // Already applied by an earlier attempt of this step: keep the state as it is.
      if (err instanceof UnexpectedPhaseResultError) return current;
      throw err;
    }
  });
  const stage = groupRunState(state, event.group).stage;
  const next = !cancelling && event.phase === 'PREPARE' && stage === 'PREPARED' ? 'DEPLOY' : 'DONE';
  if (next === 'DONE') await publishGroupFinished(deps, event.deploymentId, event.group, stage);
  return {
    deploymentId: event.deploymentId,
    group: event.group,
    phase: event.phase,
    stage,
    next,
  };
}

/** A group whose workflow broke (not a node failure: those are judged by the criteria) fails with its descendants. */
export async function failGroup(event: { deploymentId: string; group: string }, deps: GroupDeploymentDependencies) {
  await updateRunState(deps, event.deploymentId, (plan, current) => {
    const stage = groupRunState(current, event.group).stage;
    return stage === 'FAILED' || stage === 'DEPLOYED' ? current : cascadeFailure(plan, current, event.group);
  });
  await publishGroupFinished(deps, event.deploymentId, event.group, 'FAILED');
  return { deploymentId: event.deploymentId, group: event.group };
}

function publishGroupFinished(deps: GroupDeploymentDependencies, deploymentId: string, group: string, stage: string): Promise<void> {
  return publishStatusEvents(deps, [statusEvent(DETAIL_TYPES.groupFinished, { kind: 'deployment', sessionId: deploymentId, at: eventTime(deps.clock.now()), group, stage }, `group-${group}`)]);
}
