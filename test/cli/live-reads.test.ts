import path from 'node:path';
import { loadSiteFile } from '../../simulator';
import { upgradeLiveState } from '../../cli/live-state';
import type { LiveState } from '../../cli/live-view';
import { LIVE_MESSAGES } from '../../control-plane/reports/live-session';
import { startTestRuntime } from '../support/embedded';

/**
 * The live view reads an upgrade's nodes in flight alone (control-plane/reports/live-session.ts), not
 * its whole report: at every instant a run waits at, the view it draws is the one the whole report
 * would give, and it reads no more items than the nodes in flight, their plan chunk and the newest messages.
 */

const SITE = path.resolve(__dirname, '..', '..', 'examples', 'sites', 'rolling-upgrade-64.yaml');
const NPM_START = {
  startingLabel: 'compute-nodes',
  upgradingLabel: 'upgrading-nodes',
  failedLabel: 'failed-nodes',
  upgradeStepSize: 8,
  upgradeTemplateId: 'cos-2.4',
  workloadManagerType: 'slurm',
};

describe('the live view of an upgrade', () => {
  it.each([
    ["npm start's lock-step", NPM_START],
    ['a window (maxUnavailable 6, a first batch of 1)', { ...NPM_START, mode: 'window', maxUnavailable: 6, batches: [1] }],
  ])(
    "%s on the 64-node example: the view from the nodes in flight is the whole report's, at every instant the run waits",
    async (_what, request) => {
      const runtime = await startTestRuntime({ site: await loadSiteFile(SITE) });
      const counter = runtime.dynamoDbRequests;
      try {
        const run = await runtime.run('rollingUpgrade', request);
        let finished = false;
        void run.outcome.finally(() => (finished = true));
        const compared: { whole: LiveState; live: LiveState; itemsRead: number }[] = [];
        while (!finished) {
          await runtime.clock.busy(async () => {
            const before = counter.itemsRead;
            const live = await runtime.liveUpgrade(run.id);
            const itemsRead = counter.itemsRead - before;
            const view = await runtime.session(run.id);
            if (!live || live.progress.kind !== 'upgrade' || view?.kind !== 'upgrade') return;
            compared.push({ whole: upgradeLiveState(live.progress, view.report), live: upgradeLiveState(live.progress, live.report), itemsRead });
          });
          await runtime.clock.settled().catch(() => (finished = true));
        }
        expect((await run.outcome).status).toBe('SUCCEEDED');
        expect(compared.length).toBeGreaterThan(20);
        expect(compared.filter(({ whole, live }) => JSON.stringify(whole) !== JSON.stringify(live))).toEqual([]);
        // The session item, its newest message, one plan chunk twice, at most 12 records in flight (the step of 8, or the cap of 6 and as many drained
        // ahead), and the newest messages: never the 64 records.
        expect(Math.max(...compared.map((c) => c.itemsRead))).toBeLessThanOrEqual(4 + 12 + LIVE_MESSAGES);
      } finally {
        await runtime.close();
      }
    },
    120_000,
  );
});
