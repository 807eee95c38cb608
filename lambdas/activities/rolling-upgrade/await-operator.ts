import type { SiteEventKind } from '../../../core/site/site-event';
import { OperatorGateOpenError, SessionNotFoundError, SiteEventArrivedError } from '../../../core/errors';
import { operatorWait } from '../../../core/rolling-upgrade/operator-gate';
import type { RollingUpgradeDependencies } from './dependencies';

/**
 * What the workflow's `Wait For Operator` state hands the function: the session and the task's token; `Wait For
 * Site Event` adds `siteEventsSeen` (the session's siteEventCount its last increment read).
 */
export interface AwaitOperatorEvent {
  upgradeId: string;
  taskToken: string;
  siteEventsSeen?: number;
  /** The kinds of site event that end the wait (empty: any). */
  siteEventKinds?: SiteEventKind[];
}

/**
 * Wait For Operator: stores the task token on the session item, in one conditional write that holds
 * only while the session still waits for its operator (paused, or a batch not approved, and
 * UPDATING). `rollout session approve|resume|cancel` change the gate in one conditional write too and
 * send SendTaskSuccess with the token they read back, so either the token is there when the gate
 * opens, or the gate opened first and this throws OperatorGateOpen: the workflow looks again at once.
 * Its result is not the task's (the task ends with SendTaskSuccess).
 */
export async function awaitOperator(event: AwaitOperatorEvent, deps: RollingUpgradeDependencies): Promise<{ parked: string }> {
  if (event.siteEventsSeen !== undefined)
    return awaitSiteEvent({ ...event, siteEventsSeen: event.siteEventsSeen, siteEventKinds: event.siteEventKinds ?? [] }, deps);
  const session = await deps.store.getSession(event.upgradeId);
  if (!session) throw new SessionNotFoundError(event.upgradeId);
  const wait = operatorWait(session);
  if (!wait || !(await deps.store.parkForOperator(event.upgradeId, event.taskToken, wait))) throw new OperatorGateOpenError(event.upgradeId);
  return { parked: 'paused' in wait ? 'paused' : `approval of batch ${wait.wave + 1}` };
}

/**
 * Wait For Site Event (issue 29): stores the task token on the session, in one conditional write that holds only
 * while it runs and nothing (a firing, an operator's request) was delivered since its last increment read the site. A delivery takes
 * the token and sends SendTaskSuccess (ControlPlane.wakeForSiteEvent); one that came first makes this throw
 * SiteEventArrived: the workflow looks again at once. The task's timeout is the backstop poll.
 */
async function awaitSiteEvent(event: Required<AwaitOperatorEvent>, deps: RollingUpgradeDependencies): Promise<{ parked: string }> {
  if (!(await deps.store.parkForSiteEvent(event.upgradeId, event.taskToken, event.siteEventsSeen, event.siteEventKinds))) {
    throw new SiteEventArrivedError(event.upgradeId);
  }
  return { parked: 'site events' };
}
