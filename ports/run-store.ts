import type { RunMessages } from './run-messages';

/**
 * What the three run stores (upgrade sessions, group deployments, task runs) share, written once
 * (adapters/dynamodb/run-store.ts): the run's messages, the list of runs, and the operator's cancel and
 * stop requests, each moving the run's status by core's rules in one conditional write
 * (core/rolling-upgrade/session.ts SESSION_CANCEL and SESSION_STOP, core/run-status.ts RUN_CANCEL and RUN_STOP).
 */
export interface RunStore<Run> {
  /** The run's messages to its operator. */
  readonly messages: RunMessages;
  /** Newest first. Listed from an index that cannot be read consistently: a run created a moment ago may be missing. */
  list(): Promise<Run[]>;
  /** The cancel request. Throws the kind's not-found error, or SessionNotCancellableError in a status the cancel is not accepted in. */
  requestCancel(id: string): Promise<Run>;
  /** The stop request (asking again while stopping is no error). Throws the kind's not-found error, or SessionNotStoppableError. */
  requestStop(id: string): Promise<Run>;
}
