import { randomBytes } from 'node:crypto';
import type { TimeSource } from '../time/sim-clock';

/** What SendTaskSuccess, SendTaskFailure and SendTaskHeartbeat answer for a token they cannot act on, by AWS's exception names. */
export type TaskTokenErrorCode = 'TaskDoesNotExist' | 'TaskTimedOut' | 'InvalidOutput';

export class TaskTokenError extends Error {
  override readonly name = 'TaskTokenError';
  constructor(
    readonly code: TaskTokenErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A task waiting for its token (`.waitForTaskToken`): how it ends. */
interface PendingTask {
  succeed(output: unknown): void;
  fail(error: Error): void;
  heartbeat(): void;
  /** The task ended some other way (its function failed): the token closes unused. */
  abandon(): void;
}

/** How a token's task ended: `used` (SendTaskSuccess/Failure), or closed by its timeout or its execution's end. */
type Closed = 'used' | 'timed-out' | 'closed';

export interface TaskTimers {
  /** The state's TimeoutSeconds: the longest the task may wait, heartbeats or not. */
  timeoutSeconds?: number;
  /** The state's HeartbeatSeconds: the longest between two SendTaskHeartbeat calls (from the start, then from each). */
  heartbeatSeconds?: number;
}

/** An error as a task fails with it: its name is the Error that Retry and Catch match, its message the Cause. */
export function namedError(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

/**
 * The task tokens of the embedded engine's callback tasks (`.waitForTaskToken`): each waiting task
 * holds a promise keyed by its token, ended by SendTaskSuccess / SendTaskFailure, or by its timers
 * (TimeoutSeconds, HeartbeatSeconds) on the engine's clock (virtual time too), or when its
 * execution stops. A token that was used, or whose task ended otherwise, cannot be used again.
 */
export class TaskTokens {
  private readonly pending = new Map<string, PendingTask>();
  private readonly closed = new Map<string, Closed>();

  constructor(private readonly time: TimeSource) {}

  /** Tasks waiting for a token now: virtual time with only these left is waiting for the outside, not stalled. */
  get waiting(): number {
    return this.pending.size;
  }

  /**
   * Opens a task: returns its token and the promise of its output. The promise rejects with
   * `States.Timeout` when a timer runs out (a heartbeat timeout is one, as AWS's Catch on
   * States.Timeout sees it), and with `States.Aborted` when `stopped` fires (its execution stopped).
   */
  open(stateName: string, timers: TaskTimers, stopped: AbortSignal): { token: string; output: Promise<unknown> } {
    const token = randomBytes(48).toString('base64url');
    const timerStop = new AbortController();
    const output = new Promise<unknown>((resolve, reject) => {
      const end = (how: Closed, settle: () => void) => {
        if (!this.pending.has(token)) return;
        this.pending.delete(token);
        this.closed.set(token, how);
        timerStop.abort();
        stopped.removeEventListener('abort', onStop);
        settle();
      };
      const onStop = () => end('closed', () => reject(namedError('States.Aborted', `the execution of task ${stateName} stopped`)));
      let beat = new AbortController();
      const armHeartbeat = () => {
        if (timers.heartbeatSeconds === undefined) return;
        beat.abort();
        beat = new AbortController();
        const signal = AbortSignal.any([beat.signal, timerStop.signal]);
        void this.time.sleep(timers.heartbeatSeconds, signal).then(() => {
          if (!signal.aborted)
            end('timed-out', () =>
              reject(namedError('States.Timeout', `task ${stateName} sent no heartbeat for ${timers.heartbeatSeconds} s (States.HeartbeatTimeout)`)),
            );
        });
      };
      this.pending.set(token, {
        succeed: (value) => end('used', () => resolve(value)),
        fail: (error) => end('used', () => reject(error)),
        heartbeat: armHeartbeat,
        abandon: () => end('closed', () => reject(namedError('States.TaskFailed', `task ${stateName} ended before its token was used`))),
      });
      stopped.addEventListener('abort', onStop, { once: true });
      if (stopped.aborted) onStop();
      if (timers.timeoutSeconds !== undefined) {
        void this.time.sleep(timers.timeoutSeconds, timerStop.signal).then(() => {
          if (!timerStop.signal.aborted)
            end('timed-out', () => reject(namedError('States.Timeout', `task ${stateName} timed out after ${timers.timeoutSeconds} s`)));
        });
      }
      armHeartbeat();
    });
    return { token, output };
  }

  /** Closes a token whose task ended otherwise (its function failed): it can no longer be used. */
  abandon(token: string): void {
    this.pending.get(token)?.abandon();
  }

  /** SendTaskSuccess: `output` is the task's result (JSON text, as the API carries it). */
  succeed(token: string, output: string): void {
    let value: unknown;
    try {
      value = JSON.parse(output);
    } catch {
      throw new TaskTokenError('InvalidOutput', 'Invalid Output: the output is not JSON');
    }
    this.task(token).succeed(value);
    this.time.outsideEvent();
  }

  /** SendTaskFailure: the task fails with `error` (what Retry and Catch match) and `cause`. */
  fail(token: string, error = '', cause = ''): void {
    this.task(token).fail(namedError(error, cause));
    this.time.outsideEvent();
  }

  /** SendTaskHeartbeat: the heartbeat clock starts again. */
  heartbeat(token: string): void {
    this.task(token).heartbeat();
  }

  private task(token: string): PendingTask {
    const task = this.pending.get(token);
    if (task) return task;
    const closed = this.closed.get(token);
    // As AWS: a task that timed out, or whose execution ended, answers TaskTimedOut; an unknown or used token TaskDoesNotExist.
    if (closed === 'timed-out' || closed === 'closed')
      throw new TaskTokenError('TaskTimedOut', 'Task Timed Out: the task of this token has already been closed');
    throw new TaskTokenError('TaskDoesNotExist', `Task Does Not Exist: ${closed === 'used' ? 'this token was already used' : 'no task has this token'}`);
  }
}
