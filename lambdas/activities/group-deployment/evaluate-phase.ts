import {
  applyPhaseResult,
  cascadeFailure,
  groupRunState,
  type DeploymentStage,
} from '../../../core/group-deployment';
import { UnexpectedPhaseResultError } from '../../../core/errors';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { executionErrorLine } from '../../../core/execution-error';
import { eventTime, publishStatusEvents } from '../status-events';
import type { GroupDeploymentDependencies } from './dependencies';
import { updateRunState } from './run-state';
import type { PhaseRef } from './phase-batches';

export interface PhaseOutcome extends PhaseRef {
  stage: DeploymentStage;
  /** DEPLOY: the group prepared well enough to deploy; DONE: it is deployed or failed. */
  next: 'DEPLOY' | 'DONE';
}

/**
 * Judges a phase: the batch results move the submitted nodes on or fail them, then the group's
 * success criteria are evaluated over all its nodes; a miss fails the group and its descendants.
 */
export async function evaluatePhase(event: PhaseRef, deps: GroupDeploymentDependencies): Promise<PhaseOutcome> {
  const results = await deps.store.listBatchResults(event.deploymentId, event.group, event.phase);
  const succeededNodes = results.flatMap((r) => r.succeeded);
  const state = await updateRunState(deps, event.deploymentId, (plan, current) => {
    try {
      return applyPhaseResult(plan, current, { group: event.group, phase: event.phase, succeededNodes });
    } catch (err) {
      // Already applied by an earlier attempt of this step: keep the state as it is.
      if (err instanceof UnexpectedPhaseResultError) return current;
      throw err;
    }
  });
  const stage = groupRunState(state, event.group).stage;
  const next = event.phase === 'PREPARE' && stage === 'PREPARED' ? 'DEPLOY' : 'DONE';
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
export async function failGroup(event: { deploymentId: string; group: string; error?: { Error?: unknown; Cause?: unknown } }, deps: GroupDeploymentDependencies) {
  // The error the workflow caught is kept on the group: the report names what broke it.
  const cause = event.error === undefined ? undefined : executionErrorLine(event.error);
  await updateRunState(deps, event.deploymentId, (plan, current) => {
    const stage = groupRunState(current, event.group).stage;
    return stage === 'FAILED' || stage === 'DEPLOYED' ? current : cascadeFailure(plan, current, event.group, [], cause);
  });
  await publishGroupFinished(deps, event.deploymentId, event.group, 'FAILED');
  return { deploymentId: event.deploymentId, group: event.group };
}

function publishGroupFinished(deps: GroupDeploymentDependencies, deploymentId: string, group: string, stage: string): Promise<void> {
  return publishStatusEvents(deps, [statusEvent(DETAIL_TYPES.groupFinished, { kind: 'deployment', sessionId: deploymentId, at: eventTime(deps.clock.now()), group, stage }, `group-${group}`)]);
}
