import { SessionStillRunningError } from '../core/errors';
import type { SessionKind, SessionStatus } from './runtime';

/**
 * A person's resume starts an execution that carries the run on from the store; while an execution
 * still runs the run, a second one would work the same nodes beside it (a second control plane over
 * them). Every client's resume asks this before it starts one (ControlPlane.resume: the CLI's, embedded
 * or through --endpoint/--aws), using the control plane's own isRunning (the running executions,
 * named after the run or resuming it). Throws SessionStillRunningError naming the run's state.
 */
export async function refuseResumeWhileRunning(
  sessions: { isRunning(kind: SessionKind, id: string): Promise<boolean>; status(id: string): Promise<SessionStatus | undefined> },
  kind: SessionKind,
  id: string,
): Promise<void> {
  if (!(await sessions.isRunning(kind, id))) return;
  const status = await sessions.status(id);
  // Its execution is ending (the end state is stored before it ends, STOPPED included): the resume goes ahead as for any ended run.
  if (status?.ended) return;
  throw new SessionStillRunningError(kind, id, status?.state ?? 'RUNNING');
}
