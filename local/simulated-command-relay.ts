import { takeCommandEnd } from '../control-plane/command-end-intake';
import { describeError } from '../core/errors';
import type { SsmNotificationsModel, SsmStatusChange } from '../simulator/models/ssm-notifications';
import { runWhenDue, type SimulatedTriggerRelayDeps } from './simulated-trigger-relay';

export interface SimulatedCommandRelayDeps extends Omit<SimulatedTriggerRelayDeps, 'report'> {
  /**
   * A command's Comment, by its id (SSM's ListCommandInvocations): the notifications do not carry it, and it names
   * the session that sent the command. On a simulated site: `(id) => headNode.list(id)[0]?.comment`.
   */
  commentOf: (commandId: string) => string | undefined;
  /** Told of a notification that could not be taken (the store away): the backstop poll covers it. */
  report?: (line: string) => void;
}

/**
 * The bridge from a simulated site's SSM notifications to the control plane, in process: what an EventBridge rule on
 * `aws.ssm` "EC2 Command Invocation Status-change Notification" does for a real site (its target reads the command's
 * Comment and calls takeCommandEnd). Each notification of a session's health check ending (the Comment
 * `rollout <session> check <node>`) goes through takeCommandEnd as a site event of kind `command` for that session,
 * at the notification's time: the session's wait for its check is resumed, and
 * it reads the check's result once. Other notifications (InProgress, other commands) deliver nothing. Like the
 * trigger relay, it sleeps until each scheduled status change and runs it then (the simulator runs its events only
 * as it is read: runWhenDue). Returns the unsubscribe.
 */
export function relaySimulatedCommandEnds(
  notifications: Pick<SsmNotificationsModel, 'onNotification' | 'onScheduled' | 'catchUp'>,
  deps: SimulatedCommandRelayDeps,
): () => void {
  const report = deps.report ?? (() => {});
  const { clock } = deps;
  const stopped = new AbortController();
  const stopScheduled = runWhenDue(notifications.onScheduled.bind(notifications), () => notifications.catchUp(), clock, stopped.signal);
  const stopNotifications = notifications.onNotification((notification: SsmStatusChange) => {
    clock
      // Received as it is sent: no EventBridge, rule or network between them.
      .busy(() =>
        takeCommandEnd(notification, { ...deps, commentOf: async (commandId) => deps.commentOf(commandId), now: () => Date.parse(notification.time) }),
      )
      .then(
        (taken) => (taken ? deps.onTaken?.(taken.event, taken.intake) : undefined),
        (err: unknown) => report(`${notification.detail['command-id']}: not taken: ${describeError(err)}`),
      );
  });
  return () => {
    stopped.abort();
    stopScheduled();
    stopNotifications();
  };
}
