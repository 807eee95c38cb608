import { itemsReadPerCall, type EmbeddedRuntime } from '../../../local/embedded-runtime';
import { buildSite, upgradeRequest } from '../../support/sites';
import { runUpgrade, startTestRuntime } from '../../support/embedded';

/** Runs a window over `nodes` nodes and returns the DynamoDB items each AdvanceWindow increment read. */
async function readsPerIncrement(nodes: number): Promise<{ reads: number[]; runtime: EmbeddedRuntime; upgradeId: string }> {
  const reads: number[] = [];
  const runtime = await startTestRuntime({
    site: buildSite(nodes, { node: (i) => (i % 5 === 3 ? { faults: { boot: 'fail' } } : {}) }),
    wrapFunction: itemsReadPerCall('AdvanceWindow', reads, () => runtime.dynamoDbRequests),
  });
  const { upgradeId, report } = await runUpgrade(runtime, upgradeRequest({ mode: 'window', maxUnavailable: 4 }));
  expect(report.counts.UPGRADED + report.counts.FAILED).toBe(nodes);
  return { reads, runtime, upgradeId };
}

describe('mode window at scale: an increment reads what is in flight, not the fleet', () => {
  it('reads no more items per increment on 32 nodes than on 8 (the session, the in-flight index, the locks taken)', async () => {
    const small = await readsPerIncrement(8);
    await small.runtime.close();
    const large = await readsPerIncrement(32);
    try {
      // At most: the session, the 4 records in flight, the plan chunk once, the locks of the 4 nodes started.
      expect(Math.max(...small.reads)).toBeLessThanOrEqual(10);
      expect(Math.max(...large.reads)).toBeLessThanOrEqual(Math.max(...small.reads));
      expect(large.reads.length).toBeGreaterThan(small.reads.length * 2);

      // The progress display reads the session item and its newest message (one Query, Limit 1), and its counts are the records' own.
      const before = large.runtime.dynamoDbRequests.itemsRead;
      const shown = await large.runtime.progress(large.upgradeId);
      expect(large.runtime.dynamoDbRequests.itemsRead - before).toBe(2);
      const found = await large.runtime.session(large.upgradeId);
      expect(found?.kind === 'upgrade' && found.report.counts).toMatchObject({
        UPGRADED: shown?.kind === 'upgrade' ? shown.upgraded : -1,
        FAILED: shown?.kind === 'upgrade' ? shown.failed : -1,
      });
      expect(shown).toMatchObject({ upgraded: 26, failed: 6 });
    } finally {
      await large.runtime.close();
    }
  }, 180_000);
});
