import { isDeploymentWindingDown } from '../../../ports/deployment-store';
import { pollWaitSeconds } from '../../../core/group-deployment/poll-schedule';
import { nodesFailedEvents } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';
import type { GroupDeploymentDependencies } from './dependencies';
import { loadRun } from './run-state';
import { actionName, batchesOf, type PhaseRef } from './phase-batches';

export interface BatchRef extends PhaseRef {
  batch: number;
}

export interface BatchProgress extends BatchRef {
  startedAt: number;
  polls: number;
  done: boolean;
  /** Seconds until the next poll (the poll schedule of core/group-deployment). */
  waitSeconds: number;
}

/**
 * Starts the site action of one batch (idempotent: the action is named after the batch). Once the
 * deployment is CANCELLING no new action starts; one already started (an earlier attempt of this
 * step got through) is followed to its end like any action in flight, so no node is left unrecorded.
 */
export async function startBatch(event: BatchRef, deps: GroupDeploymentDependencies): Promise<BatchProgress> {
  const run = await loadRun(deps, event.deploymentId);
  const nodes = batchesOf(run, event.group, event.phase).batches[event.batch] ?? [];
  const ref: BatchRef = { deploymentId: event.deploymentId, group: event.group, phase: event.phase, batch: event.batch };
  const startedAt = deps.clock.now();
  const name = actionName(ref, event.batch);
  const starts = nodes.length > 0 && (!isDeploymentWindingDown(run.record.status) || (await deps.provisioner.getAction(name)) !== undefined);
  if (starts) await deps.provisioner.startAction({ name, action: event.phase === 'PREPARE' ? 'prepare' : 'deploy', nodes });
  return { ...ref, startedAt, polls: 0, done: !starts, waitSeconds: pollWaitSeconds(scheduleOf(run.record.settings, deps), 0) };
}

/**
 * Polls the batch's action. When it is complete, or the phase timeout has passed since it started,
 * records which nodes succeeded; the others failed (a timed-out node did not report success).
 */
export async function checkBatch(event: BatchProgress, deps: GroupDeploymentDependencies): Promise<BatchProgress> {
  const run = await loadRun(deps, event.deploymentId);
  const { settings } = run.record;
  const nodes = batchesOf(run, event.group, event.phase).batches[event.batch] ?? [];
  const action = await deps.provisioner.getAction(actionName(event, event.batch));
  const timeoutSeconds = event.phase === 'PREPARE' ? settings.prepareTimeoutSeconds : settings.deployTimeoutSeconds;
  const elapsedSeconds = (deps.clock.now() - event.startedAt) / 1000;
  const timedOut = elapsedSeconds >= timeoutSeconds;

  if (action?.status === 'complete' || timedOut) {
    const succeeded = nodes.filter((n) => action?.nodes[n] === 'succeeded');
    const succeededSet = new Set(succeeded);
    const failed = nodes.filter((n) => !succeededSet.has(n));
    await deps.store.putBatchResult(event.deploymentId, { group: event.group, phase: event.phase, batch: event.batch, succeeded, failed, timedOut: action?.status !== 'complete' });
    await publishStatusEvents(
      deps,
      nodesFailedEvents(
        { kind: 'deployment', sessionId: event.deploymentId, at: eventTime(deps.clock.now()), reason: action?.status !== 'complete' ? `${event.phase} timed out` : `${event.phase} failed`, group: event.group, phase: event.phase },
        failed,
        `group-${event.group}:${event.phase}:batch-${event.batch}`,
      ),
    );
    return { ...event, polls: event.polls + 1, done: true, waitSeconds: 0 };
  }
  const untilTimeout = Math.max(1, Math.ceil(timeoutSeconds - elapsedSeconds));
  return { ...event, polls: event.polls + 1, done: false, waitSeconds: pollWaitSeconds(scheduleOf(settings, deps), event.polls + 1, untilTimeout) };
}

function scheduleOf(settings: { pollIntervalSeconds: number }, deps: GroupDeploymentDependencies) {
  return { pollIntervalSeconds: settings.pollIntervalSeconds, maxPollSeconds: deps.settings.maxPollSeconds };
}
