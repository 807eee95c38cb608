import { SendTaskSuccessCommand, type SFNClient } from '@aws-sdk/client-sfn';

/**
 * Wakes a workflow parked in `Wait For Operator`: SendTaskSuccess with the task token stored on the
 * session (its output is not used: the workflow reads the gate from the session). A token already
 * used, or whose task timed out or ended, is no error: that execution is not waiting any more.
 */
export type OperatorWake = (taskToken: string) => Promise<void>;

/** What SendTaskSuccess carries: informative only. */
export const OPERATOR_WAKE_OUTPUT = JSON.stringify({ operatorGate: 'changed' });

/** What SendTaskSuccess carries to `Wait For Site Event`: informative only (the workflow reads the site). */
export const SITE_EVENT_WAKE_OUTPUT = JSON.stringify({ siteEvent: 'delivered' });

/** SendTaskSuccess's answers for a token no task waits on any more. */
const GONE = new Set(['TaskDoesNotExist', 'TaskTimedOut', 'InvalidToken']);

export function isGoneToken(errorName: string): boolean {
  return GONE.has(errorName);
}

/** Through `@aws-sdk/client-sfn`: an in-process control plane served on loopback, a `rollout serve`, or AWS. */
export function wakeThroughSfn(sfn: SFNClient): OperatorWake {
  return async (taskToken) => {
    try {
      await sfn.send(new SendTaskSuccessCommand({ taskToken, output: OPERATOR_WAKE_OUTPUT }));
    } catch (err) {
      if (err instanceof Error && isGoneToken(err.name)) return;
      throw err;
    }
  };
}
