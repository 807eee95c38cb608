import { SessionStillRunningError } from '../core/errors';
import type { SessionKind, SessionStatus } from './runtime';

/**
 * A person's resume starts an execution that carries the run on from the store; while an execution
 * still runs the run, a second one would work the same nodes beside it (a second control plane over
 * them). ControlPlane.resume (every client's: the CLI's, embedded or through --endpoint/--aws) asks
 * this before it starts one, with its own isRunning (the running executions, named after the run or
 * resuming it) and the run's status. Throws SessionStillRunningError naming the run's state.
 */
export function refuseResumeWhileRunning(kind: SessionKind, id: string, running: boolean, status: SessionStatus | undefined): void {
  if (!running) return;
  // Its execution is ending (the end state is stored before it ends, STOPPED included): the resume goes ahead as for any ended run.
  if (status?.ended) return;
  throw new SessionStillRunningError(kind, id, status?.state ?? 'RUNNING');
}

/**
 * Whether a person's resume can carry the run on: one that has not ended (its process or execution
 * died, or an upgrade STOPPED), or one that ended STOPPED (a deployment, a task run); not a finished one.
 */
export function canResume(status: SessionStatus): boolean {
  return !status.ended || status.state === 'STOPPED';
}
