import { claimsLeftInService, stampPhase, type NodeAction, type StageDecision, type StageOutcome } from '../../../core/rolling-upgrade/stage-decision';
import { LockLostError } from '../../../core/errors';
import type { NodeRecord, UpgradeSession } from '../../../core/rolling-upgrade/session';
import pLimit from 'p-limit';
import { renewLocks } from './observe';
import { startHealthCheck } from './health-checks';
import { DETAIL_TYPES, nodesFailedEvents, statusEvent, type StatusEvent } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';
import { lockLeaseSeconds, type RollingUpgradeDependencies } from './dependencies';
import { heartbeatDue } from '../node-claims';

/** Performs one action against the ports. Each is safe to repeat: a retried increment observes and decides again. */
async function apply(deps: RollingUpgradeDependencies, upgradeId: string, action: NodeAction): Promise<void> {
  const { site, store } = deps;
  switch (action.type) {
    case 'saveProgress':
      return store.saveProgress(upgradeId, action.expected, action.progress);
    case 'drain':
      // One call for the step: one scontrol hostlist command, or slurmrestd's batch / bounded per-node requests.
      return site.workloadManager.drainNodes(action.nodes, action.reason);
    case 'resume': {
      await site.workloadManager.resumeNodes(action.nodes);
      // Slurm 24.11 keeps the reason of a resumed node: our claim is blanked, so no finished run is read as the node's owner.
      const left = claimsLeftInService(upgradeId, action.nodes, await site.workloadManager.getNodes(action.nodes));
      if (left.length > 0) await site.workloadManager.clearReasons(left);
      return;
    }
    case 'fail':
      return site.workloadManager.failNodes(action.nodes, action.siteReason);
    case 'addToGroup':
      return site.inventory.addGroupMembers(action.label, action.nodes);
    case 'removeFromGroup':
      return site.inventory.removeGroupMembers(action.label, action.nodes);
    case 'startBoot':
      await site.bootService.createSession({ name: action.name, operation: 'reboot', templateName: action.template, limit: action.limit });
      return;
    case 'recordNodes':
      return store.putNodes(
        upgradeId,
        action.records.map((record) => stampPhase(record, deps.clock.now())),
      );
    case 'startHealthChecks': {
      // Started first, recorded with the command's id after: a crash in between starts the (read-only) check again.
      const limit = pLimit(deps.settings.siteConcurrency);
      const started = await Promise.all(
        action.records.map((record) =>
          limit(async () => ({
            ...record,
            check: {
              id: await startHealthCheck(deps, upgradeId, action.command, record.name, action.timeoutSeconds),
              startedAt: record.check?.startedAt ?? deps.clock.now(),
            },
          })),
        ),
      );
      return store.putNodes(
        upgradeId,
        started.map((record) => stampPhase(record, deps.clock.now())),
      );
    }
    case 'releaseLocks':
      return store.locks.releaseNodeLocks(upgradeId, action.nodes);
    case 'closeSession':
      return store.setState(upgradeId, action.state, action.completed);
  }
}

/** Actions that change nodes at the site: made only while the session holds the nodes' locks. */
const NODE_CHANGING: ReadonlySet<NodeAction['type']> = new Set(['drain', 'resume', 'fail', 'addToGroup', 'removeFromGroup', 'startBoot']);

/**
 * Performs a decision's actions in order, then fails the attempt if the decision says it cannot go on.
 * Right before the first node-changing action, the locks of `nodes` (the ones it works on, with the
 * tokens the session recorded) are renewed with a check: if another session took any over, nothing
 * is done to the site and LockLostError says which (the runner records the loss). Not while the locks
 * were renewed (or taken) less than a quarter lease ago (`locksRenewedAt`): no other session can have
 * taken a lock whose lease has not run out (heartbeatDue says why that margin is enough).
 */
export async function performDecision(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  decision: StageDecision,
  nodes: readonly NodeRecord[] = [],
  locksRenewedAt?: number,
): Promise<StageOutcome> {
  let checked = false;
  for (const action of decision.actions) {
    if (!checked && NODE_CHANGING.has(action.type)) {
      checked = true;
      const fresh = !heartbeatDue(locksRenewedAt, deps.clock.now(), lockLeaseSeconds(deps.settings, session));
      const lost = fresh ? new Map() : await renewLocks(deps, session, nodes);
      if (lost.size > 0) throw new LockLostError(session.upgradeId, lost);
    }
    await apply(deps, session.upgradeId, action);
  }
  await publishStatusEvents(deps, decisionEvents(deps, session, decision));
  if (decision.error) throw decision.error;
  const { progress, waitSeconds, waitForOperator, message } = decision;
  // A wait for a command's end (a health check) is a site wait only where the command transport notifies that end.
  const siteWait = decision.siteWait?.commandEnd && !deps.site.commands?.notifiesCommandEnd ? undefined : decision.siteWait;
  return {
    progress,
    waitSeconds,
    ...(waitForOperator ? { waitForOperator } : {}),
    ...(siteWait ? { siteWait } : {}),
    ...(message !== undefined ? { message } : {}),
  };
}

/** What a decision tells the status events: nodes it failed (in batches), and the session's end. */
function decisionEvents(deps: RollingUpgradeDependencies, session: UpgradeSession, decision: StageDecision): StatusEvent[] {
  const at = eventTime(deps.clock.now());
  // The step and stage the increment ran in (the decision's progress is where it goes next).
  const { step, stage } = session.progress;
  const common = { kind: 'upgrade' as const, sessionId: session.upgradeId, at };
  // Mode window has no steps (its step stays 0): its failures say no step. Events count steps from 1; eventIds keep the stored index.
  const where = session.mode === 'window' ? {} : { step: step + 1 };
  return decision.actions.flatMap((action, index): StatusEvent[] => {
    if (action.type === 'fail') return nodesFailedEvents({ ...common, reason: action.reason, ...where }, action.nodes, `step-${step}:${stage}:${index}`);
    if (action.type === 'closeSession') {
      const outcome = action.completed ? 'COMPLETED' : action.state === 'DELETED' ? 'CANCELLED' : action.state === 'STOPPED' ? 'STOPPED' : 'FAILED';
      return [statusEvent(DETAIL_TYPES.sessionFinished, { ...common, outcome, state: action.state }, 'session')];
    }
    return [];
  });
}
