import {
  COMMAND_STATUS_CHANGE,
  INVOCATION_STATUS_CHANGE,
  SSM_EVENT_SOURCE,
  type SsmCommandStatusChange,
  type SsmInvocationStatusChange,
  type SsmStatusChange,
} from '../../core/site/command-end-event';
import type { Timeline } from '../timeline';

export type { SsmStatusChange };

/** The account and region the simulated SSM's events name (AWS's documentation account). */
const ACCOUNT = '123456789012';
const REGION = 'us-east-1';

/** What a notification says of a command: the simulated head node's Invocation, as far as the events need it. */
export interface NotifiedCommand {
  commandId: string;
  instanceId: string;
  commands: readonly string[];
  requestedAt: number;
  timeoutAt: number;
}

/** Faults a scenario turns on: notifications EventBridge never delivers (it delivers on a best-effort basis). */
export interface SsmNotificationFaults {
  /** How many of the next invocation notifications are lost. */
  loseInvocationNotifications: number;
}

/**
 * SSM Run Command's status-change notifications to EventBridge (core/site/command-end-event.ts has AWS's shapes):
 * for each change of a command's status, an "EC2 Command Status-change Notification" and, for its one instance,
 * an "EC2 Command Invocation Status-change Notification", at the simulated time of the change. Sent only while
 * someone listens (a site whose EventBridge rule takes them): a site without leaves every command as it was.
 * The simulator runs its events only as it is read (Timeline): a runtime parked for a command's end is told when
 * the next change is scheduled (onScheduled) and runs it then (catchUp), as for slurmctld's trigger passes.
 */
export class SsmNotificationsModel {
  private readonly listeners = new Set<(notification: SsmStatusChange) => void>();
  private readonly scheduledListeners = new Set<(at: number) => void>();
  private sent = 0;
  readonly faults: SsmNotificationFaults = { loseInvocationNotifications: 0 };
  /** Invocation notifications lost to `faults` (a test's count). */
  lost = 0;

  constructor(private readonly timeline: Timeline) {}

  /** Whether any listener takes the notifications: without one, SSM sends none and commands behave as without EventBridge. */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  /** Calls `listener` with each notification; returns the unsubscribe. */
  onNotification(listener: (notification: SsmStatusChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `listener` with the time of each status change as it is scheduled; returns the unsubscribe. */
  onScheduled(listener: (at: number) => void): () => void {
    this.scheduledListeners.add(listener);
    return () => this.scheduledListeners.delete(listener);
  }

  /** Runs what fell due: for a runtime woken at a scheduled change's time. */
  catchUp(): void {
    this.timeline.sync();
  }

  /** Runs `change` at simulated time `at` (a command's end, its execution timeout), telling the runtime when. */
  schedule(at: number, change: () => void): void {
    this.timeline.at(at, change);
    for (const listener of this.scheduledListeners) listener(at);
  }

  /** The command's status (and its invocation's) is `status` from now: both notifications. */
  statusChanged(command: NotifiedCommand, status: string): void {
    if (!this.listening) return;
    const at = this.timeline.sync();
    const common = { version: '0' as const, source: SSM_EVENT_SOURCE, account: ACCOUNT, region: REGION, time: new Date(at).toISOString() };
    const requested = new Date(command.requestedAt).toISOString();
    const commandEvent: SsmCommandStatusChange = {
      ...common,
      id: this.nextId(),
      'detail-type': COMMAND_STATUS_CHANGE,
      resources: [`arn:aws:ec2:${REGION}:${ACCOUNT}:instance/${command.instanceId}`],
      detail: {
        'command-id': command.commandId,
        'document-name': 'AWS-RunShellScript',
        'expire-after': new Date(command.timeoutAt).toISOString(),
        parameters: { commands: [...command.commands] },
        'requested-date-time': requested,
        status,
      },
    };
    const invocationEvent: SsmInvocationStatusChange = {
      ...common,
      id: this.nextId(),
      'detail-type': INVOCATION_STATUS_CHANGE,
      resources: [`arn:aws:ec2:${REGION}:${ACCOUNT}:instance/${command.instanceId}`],
      detail: {
        'command-id': command.commandId,
        'document-name': 'AWS-RunShellScript',
        'instance-id': command.instanceId,
        'requested-date-time': requested,
        status,
      },
    };
    this.publish(commandEvent);
    if (this.faults.loseInvocationNotifications > 0) {
      this.faults.loseInvocationNotifications--;
      this.lost++;
      return;
    }
    this.publish(invocationEvent);
  }

  private publish(notification: SsmStatusChange): void {
    for (const listener of this.listeners) listener(notification);
  }

  private nextId(): string {
    return `${String(++this.sent).padStart(8, '0')}-0000-4000-8000-00000000e7e7`;
  }
}
