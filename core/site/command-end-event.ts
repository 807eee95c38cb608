import { SITE_EVENT_SESSION, type SiteEvent } from './site-event';

/**
 * SSM Run Command's status-change notifications, as EventBridge delivers them (source `aws.ssm`), followed from AWS's
 * published shapes: the EventBridge reference's list of SSM events (docs.aws.amazon.com/eventbridge/latest/ref/
 * events-ref-ssm.html: "EC2 Command Status-change Notification", "EC2 Command Invocation Status-change
 * Notification") and the Systems Manager guide's examples (docs.aws.amazon.com/systems-manager/latest/userguide/
 * monitoring-systems-manager-event-examples.html): kebab-case detail fields, times in ISO 8601. Neither carries the
 * command's Comment: who must know it (the session that sent it) reads it from the command (ListCommandInvocations,
 * GetCommandInvocation), as the simulated bridge reads it from the simulated head node.
 */
export const SSM_EVENT_SOURCE = 'aws.ssm' as const;
export const COMMAND_STATUS_CHANGE = 'EC2 Command Status-change Notification';
export const INVOCATION_STATUS_CHANGE = 'EC2 Command Invocation Status-change Notification';

/** An EventBridge event's envelope, around one of the details below. */
interface SsmEventEnvelope<DetailType extends string, Detail> {
  version: '0';
  id: string;
  'detail-type': DetailType;
  source: typeof SSM_EVENT_SOURCE;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: Detail;
}

/** A command's status changed (for a command sent to one instance, alongside its invocation's). */
export type SsmCommandStatusChange = SsmEventEnvelope<
  typeof COMMAND_STATUS_CHANGE,
  {
    'command-id': string;
    'document-name': string;
    'expire-after': string;
    parameters: Record<string, string[]>;
    'requested-date-time': string;
    status: string;
  }
>;

/** One instance's invocation of a command changed status: what ends a wait for the command. */
export type SsmInvocationStatusChange = SsmEventEnvelope<
  typeof INVOCATION_STATUS_CHANGE,
  {
    'command-id': string;
    'document-name': string;
    'instance-id': string;
    'requested-date-time': string;
    status: string;
  }
>;

export type SsmStatusChange = SsmCommandStatusChange | SsmInvocationStatusChange;

/** The statuses an invocation ends in (Run Command's "Understanding command statuses"): after one, its result can be read. */
export const ENDED_INVOCATION_STATUSES: ReadonlySet<string> = new Set([
  'Success',
  'Failed',
  'TimedOut',
  'Cancelled',
  'DeliveryTimedOut',
  'Undeliverable',
  'Terminated',
]);

/** SendCommand's Comment is at most this long. */
export const MAX_COMMAND_COMMENT_LENGTH = 100;

/**
 * The Comment a session's health check command is sent with (`rollout <session> check <node>`): what maps the
 * command's end back to the session whose wait it resumes, and the node it checked. Undefined when it would not
 * fit SSM's 100 characters: that command's end is then found by the backstop poll.
 */
export function healthCheckComment(session: string, node: string): string | undefined {
  const comment = `rollout ${session} check ${node}`;
  return comment.length <= MAX_COMMAND_COMMENT_LENGTH && SITE_EVENT_SESSION.test(session) && !/\s/.test(node) ? comment : undefined;
}

/** The session and node a health check's Comment names (healthCheckComment's), or undefined for any other command. */
export function parseHealthCheckComment(comment: string | undefined): { session: string; node: string } | undefined {
  const words = comment?.split(' ');
  if (!words || words.length !== 4 || words[0] !== 'rollout' || words[2] !== 'check') return undefined;
  const [, session, , node] = words as [string, string, string, string];
  return SITE_EVENT_SESSION.test(session) && node !== '' ? { session, node } : undefined;
}

/**
 * The site event an invocation's status change delivers: kind `command`, for the session and node its Comment
 * names, once the invocation ended (an InProgress says nothing a wait needs). Its id is the invocation's and its
 * status: a notification delivered twice (EventBridge delivers at least once) changes nothing.
 */
export function commandEndEvent(notification: SsmStatusChange, comment: string | undefined, receivedAt: string): SiteEvent | undefined {
  if (notification['detail-type'] !== INVOCATION_STATUS_CHANGE) return undefined;
  const { detail } = notification;
  const sent = parseHealthCheckComment(comment);
  if (!sent || !ENDED_INVOCATION_STATUSES.has(detail.status)) return undefined;
  return {
    id: `command:${detail['command-id']}:${detail['instance-id']}:${detail.status}`,
    event: 'command',
    nodes: [sent.node],
    session: sent.session,
    firedAt: notification.time,
    receivedAt,
  };
}
