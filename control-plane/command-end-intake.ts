import { commandEndEvent, ENDED_INVOCATION_STATUSES, INVOCATION_STATUS_CHANGE, type SsmStatusChange } from '../core/site/command-end-event';
import type { SiteEvent } from '../core/site/site-event';
import { takeSiteEvent, type SiteEventIntake } from './site-event-intake';

/** What takeSiteEvent needs. */
type SiteEventIntakeDeps = Parameters<typeof takeSiteEvent>[1];

export interface CommandEndIntakeDeps extends SiteEventIntakeDeps {
  /**
   * The command's Comment (SSM's GetCommandInvocation or ListCommandInvocations): SSM's notifications do not carry
   * it, and it names the session that sent the command. Read only for an invocation that ended.
   */
  commentOf: (commandId: string, instanceId: string) => Promise<string | undefined>;
  /** When the notification was received (epoch ms). */
  now: () => number;
}

/**
 * SSM's status-change notification of a command into the control plane, whoever delivers it (an EventBridge rule's
 * target on AWS, a simulated site's bridge): an invocation of a session's health check that ended is taken as a
 * site event of kind `command` for that session (takeSiteEvent: recorded once by its id, the session's parked
 * workflow woken). Anything else (InProgress, a command's own status, a command no session's check sent) is left:
 * undefined, and its Comment is not read.
 */
export async function takeCommandEnd(
  notification: SsmStatusChange,
  deps: CommandEndIntakeDeps,
): Promise<{ event: SiteEvent; intake: SiteEventIntake } | undefined> {
  if (notification['detail-type'] !== INVOCATION_STATUS_CHANGE || !ENDED_INVOCATION_STATUSES.has(notification.detail.status)) return undefined;
  const comment = await deps.commentOf(notification.detail['command-id'], notification.detail['instance-id']);
  const event = commandEndEvent(notification, comment, new Date(deps.now()).toISOString());
  if (!event) return undefined;
  return { event, intake: await takeSiteEvent(event, deps) };
}
