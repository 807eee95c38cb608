import { isDeploymentWindingDown } from '../../../ports/deployment-store';
import {
  applyInterruptedPhase,
  applyPhaseResult,
  cascadeFailure,
  groupRunState,
  phaseNodes,
  plannedGroup,
  type DeploymentStage,
} from '../../../core/group-deployment';
import { TaskRunNotFoundError, UnexpectedPhaseResultError } from '../../../core/errors';
import { assembleSchedule, groupTaskRunId, nodesAllActive } from '../../../core/task-graph';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { executionErrorLine } from '../../../core/execution-error';
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
  const cancelling = isDeploymentWindingDown((await loadRun(deps, event.deploymentId)).record.status);
  const { succeededNodes, failedNodes } = await outcomesOf(event, deps);
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
  if (next === 'DONE') {
    await releaseGroupLocks(deps, event.deploymentId, event.group);
    await publishGroupFinished(deps, event.deploymentId, event.group, stage);
  }
  return {
    deploymentId: event.deploymentId,
    group: event.group,
    phase: event.phase,
    stage,
    next,
  };
}

/**
 * The phase's nodes that succeeded and failed: by the batch results, or, for a deploy phase run as a
 * task graph (its run has ended when this runs), those whose tasks all ended ACTIVE and the rest.
 */
async function outcomesOf(event: PhaseRef, deps: GroupDeploymentDependencies): Promise<{ succeededNodes: string[]; failedNodes: string[] }> {
  const deployment = event.phase === 'DEPLOY' ? await deps.store.getDeployment(event.deploymentId) : undefined;
  if (!deployment?.settings.taskGraph) {
    const results = await deps.store.listBatchResults(event.deploymentId, event.group, event.phase);
    return { succeededNodes: results.flatMap((r) => r.succeeded), failedNodes: results.flatMap((r) => r.failed) };
  }
  const run = await deps.taskRuns.getRun(groupTaskRunId(event.deploymentId, event.group));
  if (!run) throw new TaskRunNotFoundError(groupTaskRunId(event.deploymentId, event.group), `the task run of group ${event.group} was never opened`);
  const plan = await deps.store.getPlan(event.deploymentId);
  const nodes = phaseNodes(plan, deployment.state, event.group, 'DEPLOY');
  const taskPlan = await deps.taskRuns.getPlan(run.runId);
  const { state } = assembleSchedule(taskPlan, run.schedule, await deps.taskRuns.getChunks(run.runId, run.chunkCount));
  const succeeded = nodesAllActive(nodes, state);
  const active = new Set(succeeded);
  // A run the deployment's cancel or stop cut short reports only the nodes it settled: one with a task that failed,
  // or all tasks ended; the others it never finished are left unreported (the group keeps its stage, and a
  // resume carries the stopped run on before the phase is judged).
  const failedNodes =
    run.status === 'CANCELLED' || run.status === 'STOPPED'
      ? nodes.filter((node) => !active.has(node) && state.ops.some((op) => op.node === node && op.state === 'ERROR'))
      : nodes.filter((node) => !active.has(node));
  return { succeededNodes: succeeded, failedNodes };
}

/** A group whose workflow broke (not a node failure: those are judged by the criteria) fails with its descendants. */
export async function failGroup(
  event: { deploymentId: string; group: string; error?: { Error?: unknown; Cause?: unknown } },
  deps: GroupDeploymentDependencies,
) {
  // The error the workflow caught is kept on the group: the report names what broke it.
  const cause = event.error === undefined ? undefined : executionErrorLine(event.error);
  await updateRunState(deps, event.deploymentId, (plan, current) => {
    const stage = groupRunState(current, event.group).stage;
    return stage === 'FAILED' || stage === 'DEPLOYED' ? current : cascadeFailure(plan, current, event.group, [], cause);
  });
  await releaseGroupLocks(deps, event.deploymentId, event.group);
  await publishGroupFinished(deps, event.deploymentId, event.group, 'FAILED');
  return { deploymentId: event.deploymentId, group: event.group };
}

/** The group is done (deployed, failed, or left where a cancel found it): the deployment gives its nodes' locks back. */
export async function releaseGroupLocks(deps: GroupDeploymentDependencies, deploymentId: string, group: string): Promise<void> {
  const plan = await deps.store.getPlan(deploymentId);
  await deps.locks.releaseNodeLocks(deploymentId, plannedGroup(plan, group).actionableNodes);
}

function publishGroupFinished(deps: GroupDeploymentDependencies, deploymentId: string, group: string, stage: string): Promise<void> {
  return publishStatusEvents(deps, [
    statusEvent(DETAIL_TYPES.groupFinished, { kind: 'deployment', sessionId: deploymentId, at: eventTime(deps.clock.now()), group, stage }, `group-${group}`),
  ]);
}
