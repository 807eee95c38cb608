import { isDeploymentWindingDown } from '../../../ports/deployment-store';
import { pollWaitSeconds } from '../../../core/group-deployment/poll-schedule';
import { nodesFailedEvents } from '../../../core/events/status-events';
import { describeError, SiteServiceError } from '../../../core/errors';
import { HELD_BY_ANOTHER_CONTROL_PLANE } from '../../../core/site/node-claims';
import { shortList } from '../../../core/text';
import { eventTime, publishStatusEvents } from '../status-events';
import { heartbeatDue, refuseClaimedElsewhere, renewHeld, sayOnce, takeLocks } from '../node-claims';
import { holdersText } from '../../../core/site/node-claims';
import { deploymentLeaseSeconds, type GroupDeploymentDependencies } from './dependencies';
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
  /**
   * False while the batch waits for its nodes' locks (another run holds some): Check Batch tries to
   * start it again at each poll. Absent (a batch started before locks existed): started.
   */
  started?: boolean;
  /** When the batch's locks were last renewed (the heartbeat runs a quarter lease apart). */
  renewedAt?: number;
}

/**
 * Starts the site action of one batch (idempotent: the action is named after the batch), once the
 * deployment holds the locks of all its nodes (all or none, as every workflow takes them: a node
 * another run holds makes the batch wait, with a message naming the holder). A node is held from its
 * prepare until its deploy ends (or its group does): no other run works on it in between. Nodes the site shows
 * claimed by another control plane's run are left out of the action (they fail the batch,
 * `held-by-another-control-plane`). Once the deployment winds down (cancelling or stopping) no new action starts; one
 * already started (an earlier attempt of this step got through) is followed to its end like any
 * action in flight, so no node is left unrecorded.
 */
export async function startBatch(event: BatchRef, deps: GroupDeploymentDependencies): Promise<BatchProgress> {
  return reportSiteErrors(deps, event, () => tryStart(event, deps, 0));
}

async function tryStart(event: BatchRef, deps: GroupDeploymentDependencies, polls: number): Promise<BatchProgress> {
  const run = await loadRun(deps, event.deploymentId);
  const nodes = batchesOf(run, event.group, event.phase).batches[event.batch] ?? [];
  const ref: BatchRef = { deploymentId: event.deploymentId, group: event.group, phase: event.phase, batch: event.batch };
  const startedAt = deps.clock.now();
  const schedule = scheduleOf(run.record.settings, deps);
  const name = actionName(ref, event.batch);
  // An action an earlier attempt started is followed (its locks were taken then, and are taken again: same owner).
  const existing = () => deps.provisioner.getAction(name);
  if (nodes.length === 0 || (isDeploymentWindingDown(run.record.status) && (await existing()) === undefined)) {
    return { ...ref, startedAt, polls, done: true, started: false, waitSeconds: 0 };
  }
  const lease = deploymentLeaseSeconds(deps.settings, run.record.settings.pollIntervalSeconds);
  const { heldByOthers } = await takeLocks(deps.locks, ref.deploymentId, nodes, lease, 'all-or-none');
  if (heldByOthers.size > 0 && (await existing()) === undefined) {
    await sayOnce(
      deps.store.messages,
      ref.deploymentId,
      `Group ${ref.group} ${ref.phase.toLowerCase()} batch ${ref.batch + 1} waits for nodes another run holds: ${holdersText(heldByOthers)}`,
    );
    return { ...ref, startedAt, polls: polls + 1, done: false, started: false, waitSeconds: pollWaitSeconds(schedule, polls + 1) };
  }
  const claimed = await claimsOf(deps, ref.deploymentId, nodes);
  const acting = nodes.filter((node) => !claimed.has(node));
  if (claimed.size > 0) {
    await deps.store.messages.append(
      ref.deploymentId,
      `Group ${ref.group} ${ref.phase.toLowerCase()} batch ${ref.batch + 1}: ${claimed.size} node(s) left alone, ${HELD_BY_ANOTHER_CONTROL_PLANE}: the site shows them claimed by run ${[...new Set(claimed.values())].join(', ')}, which this control plane does not know: ${shortList([...claimed.keys()])}`,
    );
  }
  if (acting.length === 0) {
    // Nothing left to act on: every node of the batch failed it, at once.
    await deps.store.putBatchResult(ref.deploymentId, {
      group: ref.group,
      phase: ref.phase,
      batch: ref.batch,
      succeeded: [],
      failed: [...nodes],
      timedOut: false,
    });
    await deps.locks.releaseNodeLocks(ref.deploymentId, nodes);
    return { ...ref, startedAt, polls, done: true, started: true, waitSeconds: 0 };
  }
  // Starting is idempotent: a retry meets the action an earlier attempt started (by its name).
  await deps.provisioner.startAction({ name, action: ref.phase === 'PREPARE' ? 'prepare' : 'deploy', nodes: acting });
  return { ...ref, startedAt, polls: 0, done: false, started: true, waitSeconds: pollWaitSeconds(schedule, 0), renewedAt: startedAt };
}

/** The nodes the site shows claimed by another control plane's run (none without a workload manager to ask). */
async function claimsOf(deps: GroupDeploymentDependencies, owner: string, nodes: readonly string[]): Promise<Map<string, string>> {
  if (!deps.workloadManager) return new Map();
  return refuseClaimedElsewhere({ locks: deps.locks, workloadManager: deps.workloadManager }, owner, nodes);
}

/**
 * Polls the batch's action (or, while it waits for its nodes' locks, tries to start it again). When
 * it is complete, or the phase timeout has passed since it started, records which nodes succeeded;
 * the others failed (a timed-out node did not report success); then gives their locks back.
 */
export async function checkBatch(event: BatchProgress, deps: GroupDeploymentDependencies): Promise<BatchProgress> {
  return reportSiteErrors(deps, event, async () => {
    if (event.started === false) return tryStart(event, deps, event.polls);
    return poll(event, deps);
  });
}

async function poll(event: BatchProgress, deps: GroupDeploymentDependencies): Promise<BatchProgress> {
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
    const unfinished = action?.status !== 'complete';
    await deps.store.putBatchResult(event.deploymentId, {
      group: event.group,
      phase: event.phase,
      batch: event.batch,
      succeeded,
      failed,
      timedOut: unfinished,
    });
    await publishStatusEvents(
      deps,
      nodesFailedEvents(
        {
          kind: 'deployment',
          sessionId: event.deploymentId,
          at: eventTime(deps.clock.now()),
          reason: unfinished ? `${event.phase} timed out` : `${event.phase} failed`,
          group: event.group,
          phase: event.phase,
        },
        failed,
        `group-${event.group}:${event.phase}:batch-${event.batch}`,
      ),
    );
    // Done with these nodes: their locks go back (after the result, so a retry finds it recorded); a node
    // that prepared stays held until its deploy, so no other run works on it in between.
    await deps.locks.releaseNodeLocks(event.deploymentId, event.phase === 'PREPARE' ? failed : nodes);
    return { ...event, polls: event.polls + 1, done: true, waitSeconds: 0 };
  }
  // The heartbeat of the batch's locks while its action runs, a quarter lease apart (taken at the start: renewed then).
  const lease = deploymentLeaseSeconds(deps.settings, settings.pollIntervalSeconds);
  const now = deps.clock.now();
  let renewedAt = event.renewedAt;
  if (heartbeatDue(renewedAt ?? event.startedAt, now, lease)) {
    const held = await deps.locks.getNodeLocks(nodes);
    const ours = new Map([...held].filter(([, lock]) => lock.owner === event.deploymentId).map(([node, lock]) => [node, lock.fencingToken]));
    await renewHeld(deps.locks, event.deploymentId, ours, lease);
    renewedAt = now;
  }
  const untilTimeout = Math.max(1, Math.ceil(timeoutSeconds - elapsedSeconds));
  return {
    ...event,
    polls: event.polls + 1,
    done: false,
    waitSeconds: pollWaitSeconds(scheduleOf(settings, deps), event.polls + 1, untilTimeout),
    ...(renewedAt !== undefined ? { renewedAt } : {}),
  };
}

/** A site call that failed or timed out is said at once in the deployment's messages (once while it lasts); the workflow retries. */
async function reportSiteErrors<T>(deps: GroupDeploymentDependencies, ref: BatchRef, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof SiteServiceError)
      await sayOnce(
        deps.store.messages,
        ref.deploymentId,
        `Group ${ref.group} ${ref.phase.toLowerCase()} batch ${ref.batch + 1} failed - ${describeError(err)}`,
      );
    throw err;
  }
}

function scheduleOf(settings: { pollIntervalSeconds: number }, deps: GroupDeploymentDependencies) {
  return { pollIntervalSeconds: settings.pollIntervalSeconds, maxPollSeconds: deps.settings.maxPollSeconds };
}
