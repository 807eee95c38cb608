import { DETAIL_TYPES, STATUS_EVENT_SCHEMAS } from '../../../core/events/status-events';
import { eventually, startTestRuntime } from '../../support/embedded';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';

/** Mode window's status events: a batch's start, end and approval wait, and node failures each with its own id. */
describe('status events of a window', () => {
  it('publishes batch started/finished with counts, the approval wait, and one Nodes Failed event per failure, every id distinct', async () => {
    // Node 0 fails its boot (batch 1); node 3 never returns to service (batch 2): two failures at different increments of ROLLING.
    const runtime = await startTestRuntime({
      site: buildSite(5, { node: (i) => (i === 0 ? { faults: { boot: 'fail' } } : i === 3 ? { faults: { returnToService: 'never' } } : {}) }),
    });
    try {
      const run = await runtime.run(
        'rollingUpgrade',
        upgradeRequest({ mode: 'window', maxUnavailable: 2, batches: [2, 3], pauseAfterBatches: [1], wlmReturnTimeoutSeconds: 60, pollIntervalSeconds: 30 }),
      );
      await eventually(
        runtime,
        async () => ((await runtime.store.getSession(run.id))?.progress.window?.awaitingApproval === 1 ? true : undefined),
        'the wait for batch 2',
      );
      await runtime.clock.busy(() => runtime.gate(run.id, 'approve'));
      expect((await run.outcome).status).toBe('SUCCEEDED');

      const events = (await runtime.events.read()).filter((e) => e.detail.sessionId === run.id);
      for (const event of events) expect(STATUS_EVENT_SCHEMAS[event.detailType].parse(event.detail)).toEqual(event.detail);
      expect(new Set(events.map((e) => e.detail.eventId)).size).toBe(events.length);
      const batchEvents = events
        .filter((e) => e.detailType.startsWith('Rollout Batch'))
        .map(({ detailType, detail }) => ({
          detailType,
          ...('batch' in detail ? { batch: detail.batch } : {}),
          ...('upgraded' in detail ? { upgraded: detail.upgraded, failed: detail.failed } : {}),
        }));
      expect(batchEvents).toEqual([
        { detailType: DETAIL_TYPES.batchStarted, batch: 1 },
        { detailType: DETAIL_TYPES.batchFinished, batch: 1, upgraded: 1, failed: 1 },
        { detailType: DETAIL_TYPES.batchAwaitingApproval, batch: 2 },
        { detailType: DETAIL_TYPES.batchStarted, batch: 2 },
        { detailType: DETAIL_TYPES.batchFinished, batch: 2, upgraded: 2, failed: 1 },
      ]);
      const failures = events.filter((e) => e.detailType === DETAIL_TYPES.nodesFailed).map((e) => e.detail);
      expect(failures).toEqual([
        expect.objectContaining({ nodes: [nodeName(0)], reason: 'upgrading-boot-session-failed' }),
        expect.objectContaining({ nodes: [nodeName(3)], reason: 'upgrading-time-out-wlm-waiting' }),
      ]);
      expect(failures[0]).not.toHaveProperty('step');
      expect(events.at(-1)).toMatchObject({ detailType: DETAIL_TYPES.sessionFinished, detail: { outcome: 'COMPLETED' } });
    } finally {
      await runtime.close();
    }
  });
});
