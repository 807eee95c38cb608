import type { StatusEvent } from '../core/events/status-events';

/** Where the workflows' status events go: an EventBridge bus on AWS; a JSON-lines file or memory locally. */
export interface StatusEventPublisher {
  publish(events: readonly StatusEvent[]): Promise<void>;
}

/** A publisher whose events can be read back (the embedded control plane's): `after` is how many the reader has seen. */
export interface StatusEventLog extends StatusEventPublisher {
  read(after?: number): Promise<PublishedEvent[]>;
}

/** An event as a log keeps it: with its time of publication and sequence number. */
export interface PublishedEvent {
  seq: number;
  source: string;
  detailType: StatusEvent['detailType'];
  detail: StatusEvent['detail'];
}
