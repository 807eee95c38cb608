import { readdir, readFile } from 'node:fs/promises';
import {
  DETAIL_TYPES,
  FAILED_NODES_PER_EVENT,
  nodesFailedEvents,
  schemaFileOf,
  STATUS_EVENT_SCHEMAS,
  statusEvent,
  statusEventJsonSchema,
} from '../../../core/events/status-events';

const schemasDir = new URL('../../../schemas/events/', import.meta.url);

describe('status events', () => {
  it('each detail-type has its JSON Schema in schemas/events/, equal to the zod schema (regenerate: npx tsx scripts/write-event-schemas.ts)', async () => {
    const files = (await readdir(schemasDir)).sort();
    expect(files).toEqual(Object.values(DETAIL_TYPES).map(schemaFileOf).sort());
    for (const detailType of Object.values(DETAIL_TYPES)) {
      const stored = JSON.parse(await readFile(new URL(schemaFileOf(detailType), schemasDir), 'utf8')) as unknown;
      expect({ detailType, schema: stored }).toEqual({ detailType, schema: statusEventJsonSchema(detailType) });
    }
  });

  it('derives the event id from the session and where it is: the same on a retry, different per step', () => {
    const detail = { kind: 'upgrade' as const, sessionId: 'u-1', at: '2026-01-01T00:00:00.000Z', step: 3, stepCount: 5 };
    const first = statusEvent(DETAIL_TYPES.stepFinished, detail, 'step-3');
    expect(statusEvent(DETAIL_TYPES.stepFinished, { ...detail, at: '2026-01-01T00:05:00.000Z' }, 'step-3').detail.eventId).toBe(first.detail.eventId);
    expect(statusEvent(DETAIL_TYPES.stepFinished, { ...detail, step: 4 }, 'step-4').detail.eventId).not.toBe(first.detail.eventId);
    expect(statusEvent(DETAIL_TYPES.stepStarted, { ...detail, nodeCount: 2 }, 'step-3').detail.eventId).not.toBe(first.detail.eventId);
    expect(STATUS_EVENT_SCHEMAS[DETAIL_TYPES.stepFinished].parse(first.detail)).toEqual(first.detail);
  });

  it('batches node failures: at most FAILED_NODES_PER_EVENT names an event, every node once', () => {
    const nodes = Array.from({ length: 1234 }, (_, i) => `n${i}`);
    const events = nodesFailedEvents(
      { kind: 'deployment', sessionId: 'd-1', at: '2026-01-01T00:00:00.000Z', reason: 'DEPLOY failed', group: 'g' },
      nodes,
      'group-g:DEPLOY:batch-0',
    );
    expect(events).toHaveLength(Math.ceil(nodes.length / FAILED_NODES_PER_EVENT));
    expect(events.flatMap((event) => (event.detail as { nodes: string[] }).nodes)).toEqual(nodes);
    expect(new Set(events.map((event) => event.detail.eventId)).size).toBe(events.length);
    for (const event of events) STATUS_EVENT_SCHEMAS[DETAIL_TYPES.nodesFailed].parse(event.detail);
    expect(nodesFailedEvents({ kind: 'deployment', sessionId: 'd-1', at: '2026-01-01T00:00:00.000Z', reason: 'x' }, [], 'w')).toEqual([]);
  });
});
