import { RESUME_CARRIES_ON } from './session-control';

/** How an operator's request moves a run: the statuses it is accepted in, and the status it moves the run to. */
export interface StatusTransition<S extends string> {
  from: readonly S[];
  to: S;
}

/**
 * A group deployment's or a task run's status: RUNNING, then SUCCEEDED or FAILED; a cancel request
 * turns it into CANCELLING, which the workflow picks up at its next increment and ends CANCELLED. A stop
 * request turns it into STOPPING: the workflow winds down the same way (nothing new starts, actions in
 * flight finish) but ends STOPPED, which a person's resume turns back into RUNNING. (An upgrade's
 * states are CRUS's: core/rolling-upgrade/session.ts.)
 */
export type RunStatus = 'RUNNING' | 'CANCELLING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED' | 'STOPPING' | 'STOPPED';

/** The statuses a run ends in: no workflow works on it any more, nothing resumes it. */
export const ENDED_RUN_STATUSES: readonly RunStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

/** An operator's cancel: accepted until the run has ended (a stopped or stopping run too: its resume winds it down to CANCELLED). */
export const RUN_CANCEL = { from: ['RUNNING', 'CANCELLING', 'STOPPING', 'STOPPED'], to: 'CANCELLING' } as const satisfies StatusTransition<RunStatus>;

/** An operator's stop: accepted while RUNNING (asking again while STOPPING is no error). */
export const RUN_STOP = { from: ['RUNNING', 'STOPPING'], to: 'STOPPING' } as const satisfies StatusTransition<RunStatus>;

/** A person's resume: a stop not finished is withdrawn, a STOPPED run reopens (core/session-control.ts RESUME_CARRIES_ON). */
export const RUN_RESUME = { from: RESUME_CARRIES_ON, to: 'RUNNING' } as const satisfies StatusTransition<RunStatus>;
