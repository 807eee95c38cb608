import { takeCommandEnd } from '../control-plane/command-end-intake';
import type { SsmNotificationsModel, SsmStatusChange } from '../simulator/models/ssm-notifications';
import { relayInProcess } from './in-process-relay';
import type { SimulatedTriggerRelayDeps } from './simulated-trigger-relay';

export interface SimulatedCommandRelayDeps extends SimulatedTriggerRelayDeps {
  /**
   * A command's Comment, by its id (SSM's ListCommandInvocations): the notifications do not carry it, and it names
   * the session that sent the command. On a simulated site: `(id) => headNode.list(id)[0]?.comment`.
   */
  commentOf: (commandId: string) => string | undefined;
}

/**
 * The bridge from a simulated site's SSM notifications to the control plane, in process: what an EventBridge rule on
 * `aws.ssm` "EC2 Command Invocation Status-change Notification" does for a real site (its target reads the command's
 * Comment and calls takeCommandEnd). Each notification of a session's health check ending (the Comment
 * `rollout <session> check <node>`) goes through takeCommandEnd as a site event of kind `command` for that session,
 * at the notification's time: the session's wait for its check is resumed, and it reads the check's result once.
 * Other notifications (InProgress, other commands) deliver nothing. Like the trigger relay, it runs each scheduled
 * status change at its time (relayInProcess). Returns the unsubscribe.
 */
export function relaySimulatedCommandEnds(
  notifications: Pick<SsmNotificationsModel, 'onNotification' | 'onScheduled' | 'catchUp'>,
  deps: SimulatedCommandRelayDeps,
): () => void {
  const source = {
    onScheduled: notifications.onScheduled.bind(notifications),
    catchUp: () => notifications.catchUp(),
    onEmitted: notifications.onNotification.bind(notifications),
  };
  return relayInProcess(
    source,
    (notification: SsmStatusChange) => ({
      id: notification.detail['command-id'],
      // Received as it is sent: no EventBridge, rule or network between them.
      take: () =>
        takeCommandEnd(notification, { ...deps, commentOf: async (commandId) => deps.commentOf(commandId), now: () => Date.parse(notification.time) }),
    }),
    deps,
  );
}
