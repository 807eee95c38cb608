import type { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { EventBridgePublisher, MAX_BYTES_PER_PUT, MAX_ENTRIES_PER_PUT } from '../../../adapters/events/eventbridge-publisher';
import { DETAIL_TYPES, EVENT_SOURCE, statusEvent, type StatusEvent } from '../../../core/events/status-events';

const event = (i: number, summary = 'x'): StatusEvent =>
  statusEvent(DETAIL_TYPES.sessionStarted, { kind: 'upgrade', sessionId: `u-${i}`, at: '2026-01-01T00:00:00.000Z', summary }, 'session');

/** A fake EventBridge client (unit test): records each PutEvents and fails the entries `fail` picks. */
function fakeClient(fail: (detail: string, call: number) => boolean = () => false) {
  const calls: { EventBusName?: string; Source?: string; DetailType?: string; Detail?: string }[][] = [];
  return {
    calls,
    client: {
      send: async (command: PutEventsCommand) => {
        const entries = command.input.Entries ?? [];
        calls.push(entries);
        const results = entries.map((entry) =>
          fail(entry.Detail!, calls.length) ? { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' } : { EventId: 'id' },
        );
        return { FailedEntryCount: results.filter((r) => 'ErrorCode' in r).length, Entries: results };
      },
    } as never,
  };
}

describe('the EventBridge publisher', () => {
  it('sends PutEvents of at most 10 entries, to the bus, with the source and detail-type', async () => {
    const { client, calls } = fakeClient();
    await new EventBridgePublisher(client, 'rollout-bus').publish(Array.from({ length: 23 }, (_, i) => event(i)));
    expect(calls.map((c) => c.length)).toEqual([MAX_ENTRIES_PER_PUT, MAX_ENTRIES_PER_PUT, 3]);
    expect(calls[0]![0]).toMatchObject({ EventBusName: 'rollout-bus', Source: EVENT_SOURCE, DetailType: 'Rollout Session Started' });
    expect(JSON.parse(calls[2]![2]!.Detail!)).toMatchObject({ sessionId: 'u-22', eventId: 'u-22:session:session-started' });
  });

  it('keeps each call under 256 KB', async () => {
    const { client, calls } = fakeClient();
    await new EventBridgePublisher(client, 'bus').publish(Array.from({ length: 5 }, (_, i) => event(i, 'y'.repeat(100 * 1024))));
    expect(calls.map((c) => c.length)).toEqual([2, 2, 1]);
    for (const call of calls) expect(call.reduce((sum, entry) => sum + Buffer.byteLength(entry.Detail!), 0)).toBeLessThanOrEqual(MAX_BYTES_PER_PUT);
  });

  it('sends failed entries once more, then raises naming them', async () => {
    const retried = fakeClient((detail, call) => call === 1 && detail.includes('u-1"'));
    await new EventBridgePublisher(retried.client, 'bus').publish([event(0), event(1)]);
    expect(retried.calls.map((c) => c.map((e) => JSON.parse(e.Detail!).sessionId as string))).toEqual([['u-0', 'u-1'], ['u-1']]);

    const refused = fakeClient((detail) => detail.includes('u-1"'));
    await expect(new EventBridgePublisher(refused.client, 'bus').publish([event(0), event(1)])).rejects.toMatchObject({
      name: 'EventPublishError',
      message: expect.stringContaining('InternalFailure'),
    });
  });
});
