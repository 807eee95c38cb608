import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readEventLines } from '../../adapters/events/event-logs';
import { DETAIL_TYPES, STATUS_EVENT_SCHEMAS } from '../../core/events/status-events';
import { EVENTS_FILE } from '../../local/embedded-runtime';
import { fetchEvents } from '../../local/events-endpoint';
import { startServedControlPlane } from '../../local/serve';
import { rolloutClient } from '../../control-plane/aws-client/rollout-client';
import type { PublishedEvent } from '../../ports/status-events';
import { buildSite, upgradeRequest } from '../support/sites';

function expectValid(events: PublishedEvent[]): void {
  for (const event of events) expect(STATUS_EVENT_SCHEMAS[event.detailType].parse(event.detail)).toEqual(event.detail);
}

describe('status events of the embedded control plane', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-events-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('an upgrade with a node failure publishes session, step and node-failure events to the data dir and the serve endpoint', async () => {
    const site = buildSite(4, { node: (i) => (i === 3 ? { faults: { returnToService: 'never' } } : {}) });
    const served = await startServedControlPlane({ site: { kind: 'simulated', definition: site }, dataDir: dir });
    const client = rolloutClient({ endpoints: served.endpoints, localCredentials: true, pollMs: 5 });
    try {
      const run = await client.run('rollingUpgrade', upgradeRequest({ upgradeStepSize: 2, wlmReturnTimeoutSeconds: 60 }));
      expect((await run.outcome).status).toBe('SUCCEEDED');
      const events = await fetchEvents(served.endpoints.stepFunctionsEndpoint, 0);
      expectValid(events);
      expect(events.map((e) => e.detailType)).toEqual([
        DETAIL_TYPES.sessionStarted,
        DETAIL_TYPES.stepStarted,
        DETAIL_TYPES.stepFinished,
        DETAIL_TYPES.stepStarted,
        DETAIL_TYPES.nodesFailed,
        DETAIL_TYPES.stepFinished,
        DETAIL_TYPES.sessionFinished,
      ]);
      expect(events.every((e) => e.detail.sessionId === run.id)).toBe(true);
      expect(events[1]!.detail).toMatchObject({ step: 1, stepCount: 2, nodeCount: 2 });
      expect(events[2]!.detail).toMatchObject({ step: 1, stepCount: 2, upgraded: 2, failed: 0 });
      expect(events[4]!.detail).toMatchObject({ step: 2, nodes: [site.nodes[3]!.name] });
      expect(events[5]!.detail).toMatchObject({ step: 2, upgraded: 1, failed: 1 });
      expect(events[6]!.detail).toMatchObject({ outcome: 'COMPLETED', state: 'READY' });
      expect(new Set(events.map((e) => e.detail.eventId)).size).toBe(events.length);
      expect(await fetchEvents(served.endpoints.stepFunctionsEndpoint, 5)).toEqual(events.slice(5));
    } finally {
      await client.close();
      await served.close();
    }
    // The same events, as `rollout events --data-dir` reads them after the serve ended.
    const stored = await readEventLines(path.join(dir, EVENTS_FILE));
    expect(stored.map((e) => e.detail.eventId)).toHaveLength(7);
    expect(stored.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // On a data directory (LevelDB) a loaded host takes longer than jest's default; virtual time makes the run itself the same.
  }, 180_000);

  it('a deployment with a failed node publishes session, group and node-failure events', async () => {
    const site = buildSite(3, { node: (i) => (i === 1 ? { faults: { deploy: 'fail' } } : {}) });
    const served = await startServedControlPlane({ site: { kind: 'simulated', definition: site } });
    const client = rolloutClient({ endpoints: served.endpoints, localCredentials: true, pollMs: 5 });
    try {
      const run = await client.run('groupDeployment', { nodes: site.nodes.map((n) => n.name), pollIntervalSeconds: 10 });
      await run.outcome;
      const events = await served.runtime.events.read();
      expectValid(events);
      const types = events.map((e) => e.detailType);
      expect(types[0]).toBe(DETAIL_TYPES.sessionStarted);
      expect(types).toContain(DETAIL_TYPES.groupStarted);
      expect(events.find((e) => e.detailType === DETAIL_TYPES.nodesFailed)?.detail).toMatchObject({
        nodes: [site.nodes[1]!.name],
        group: 'default',
        phase: 'DEPLOY',
      });
      expect(events.find((e) => e.detailType === DETAIL_TYPES.groupFinished)?.detail).toMatchObject({ group: 'default', stage: 'FAILED' });
      expect(events.at(-1)).toMatchObject({ detailType: DETAIL_TYPES.sessionFinished, detail: { outcome: 'FAILED', state: 'FAILED' } });
    } finally {
      await client.close();
      await served.close();
    }
  });
});
