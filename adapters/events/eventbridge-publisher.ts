import { PutEventsCommand, type EventBridgeClient, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { EVENT_SOURCE, type StatusEvent } from '../../core/events/status-events';
import type { StatusEventPublisher } from '../../ports/status-events';

/** PutEvents takes at most 10 entries, and 256 KB in all. */
export const MAX_ENTRIES_PER_PUT = 10;
export const MAX_BYTES_PER_PUT = 256 * 1024;

/** Raised when entries stay failed after the retry: which detail-types, and EventBridge's error codes. */
export class EventPublishError extends Error {
  override readonly name = 'EventPublishError';
  constructor(readonly failures: { detailType: string; errorCode?: string; errorMessage?: string }[]) {
    super(
      `EventBridge refused ${failures.length} event(s): ${failures.map((f) => `${f.detailType} (${f.errorCode ?? 'unknown'}: ${f.errorMessage ?? ''})`).join('; ')}`,
    );
  }
}

/** EventBridge counts an entry's size as its strings' UTF-8 bytes (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html). */
function entrySize(entry: PutEventsRequestEntry): number {
  let size = 14; // the time field
  for (const text of [entry.Source, entry.DetailType, entry.Detail, ...(entry.Resources ?? [])]) if (text) size += Buffer.byteLength(text);
  if (entry.EventBusName) size += Buffer.byteLength(entry.EventBusName);
  return size;
}

/** Groups entries into PutEvents calls of at most 10 entries and 256 KB. */
export function batchEntries(entries: readonly PutEventsRequestEntry[]): PutEventsRequestEntry[][] {
  const batches: PutEventsRequestEntry[][] = [];
  let current: PutEventsRequestEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = entrySize(entry);
    if (size > MAX_BYTES_PER_PUT) throw new Error(`a ${entry.DetailType} event of ${size} bytes exceeds EventBridge's ${MAX_BYTES_PER_PUT}`);
    if (current.length === MAX_ENTRIES_PER_PUT || bytes + size > MAX_BYTES_PER_PUT) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * Status events to an EventBridge bus through PutEvents, batched (≤ 10 entries, ≤ 256 KB). The SDK
 * retries throttled calls; entries a call reports failed are sent once more, then raised.
 */
export class EventBridgePublisher implements StatusEventPublisher {
  constructor(
    private readonly client: Pick<EventBridgeClient, 'send'>,
    private readonly eventBusName: string,
  ) {}

  async publish(events: readonly StatusEvent[]): Promise<void> {
    const entries = events.map((event) => ({
      EventBusName: this.eventBusName,
      Source: EVENT_SOURCE,
      DetailType: event.detailType,
      Detail: JSON.stringify(event.detail),
    }));
    for (const batch of batchEntries(entries)) {
      let pending = batch;
      for (let attempt = 1; pending.length > 0; attempt++) {
        const answer = await this.client.send(new PutEventsCommand({ Entries: pending }));
        if (!answer.FailedEntryCount) break;
        const failed = pending.flatMap((entry, i) => (answer.Entries?.[i]?.ErrorCode ? [{ entry, result: answer.Entries[i]! }] : []));
        if (attempt >= 2) {
          throw new EventPublishError(
            failed.map(({ entry, result }) => ({
              detailType: entry.DetailType!,
              ...(result.ErrorCode ? { errorCode: result.ErrorCode } : {}),
              ...(result.ErrorMessage ? { errorMessage: result.ErrorMessage } : {}),
            })),
          );
        }
        pending = failed.map(({ entry }) => entry);
      }
    }
  }
}
