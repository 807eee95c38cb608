import path from 'node:path';
import { loadSiteFile } from '../../../simulator';
import type { Progress } from '../../../core/rolling-upgrade/session';
import { startTestRuntime } from '../../support/embedded';
import { EXAMPLE_REQUEST } from '../../../scripts/upgrade-args';
import { simulatedSiteClients } from '../../../local/simulated-site-clients';
import { MOST_REPLANS } from '../../../lambdas/activities/rolling-upgrade/run-estimate';
import { buildSite, upgradeRequest } from '../../support/sites';

/**
 * The ETA a run writes (progress.estimate) is the plan made again from the site as it is and the
 * durations seen so far: on `npm start`'s site and flags (package.json "start", faults and all), on
 * virtual time, every estimate after step 1 is within 25% of the time the run really had left; and so
 * for the README's window over the same site.
 */

const SITE = path.resolve(__dirname, '..', '..', '..', 'examples', 'sites', 'rolling-upgrade-64.yaml');

describe('the ETA converges', () => {
  it.each([
    ["npm start's lock-step", EXAMPLE_REQUEST],
    ['the window of the README (maxUnavailable 6, a first batch of 1)', { ...EXAMPLE_REQUEST, mode: 'window', maxUnavailable: 6, batches: [1] }],
  ])(
    '%s on the 64-node example: every estimate after the first nodes are done within 25%% of the time left',
    async (_what, request) => {
      const runtime = await startTestRuntime({ site: await loadSiteFile(SITE) });
      try {
        const start = runtime.clock.now();
        const run = await runtime.run('rollingUpgrade', request);
        let finished = false;
        void run.outcome.finally(() => (finished = true));
        // Every estimate written (each made anew: its basis says how many nodes were done), with the instant it was read (each simulated instant the run waits at).
        const seen: { at: number; estimate: NonNullable<Progress['estimate']> }[] = [];
        while (!finished) {
          await runtime.clock.busy(async () => {
            const progress = (await runtime.store.getSession(run.id))?.progress;
            if (progress?.estimate && JSON.stringify(seen.at(-1)?.estimate) !== JSON.stringify(progress.estimate))
              seen.push({ at: runtime.clock.now(), estimate: progress.estimate });
          });
          await runtime.clock.settled().catch(() => (finished = true));
        }
        expect((await run.outcome).status).toBe('SUCCEEDED');
        const site = runtime.simulator.state();
        const end = start + 1000 * Math.max(...Object.values(site.nodes).flatMap((n) => n.outOfService.map(([, to]) => to ?? Infinity)));

        const errors = seen.map(({ at, estimate }) => ({ basis: estimate.basis, left: (end - at) / 1000, off: (estimate.endsAt - end) / 1000 }));
        expect(errors.length).toBeGreaterThanOrEqual(6);
        expect(errors.filter((e) => Math.abs(e.off) > 0.25 * e.left)).toEqual([]);
      } finally {
        await runtime.close();
      }
    },
    120_000,
  );

  it('is made again at most MOST_REPLANS times a run, each a read of every node left at the site: 60 nodes at maxUnavailable 1 re-plan 20 times, not 60', async () => {
    // In plan order the window reads no job ends of its own: each job-end read is a re-plan's.
    const replans: number[] = [];
    const runtime = await startTestRuntime({
      site: buildSite(60),
      connectors: (simulator) => {
        const site = simulatedSiteClients(simulator);
        const wm = site.workloadManager;
        const getJobEnds = wm.getJobEnds!.bind(wm);
        const workloadManager = Object.assign(Object.create(wm) as typeof wm, {
          getJobEnds: (names: readonly string[]) => {
            replans.push(names.length);
            return getJobEnds(names);
          },
        });
        return { ...site, workloadManager };
      },
    });
    try {
      const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 1 }));
      expect((await run.outcome).status).toBe('SUCCEEDED');
      expect(replans.length).toBeGreaterThanOrEqual(MOST_REPLANS - 1);
      expect(replans.length).toBeLessThanOrEqual(MOST_REPLANS);
      // Each of every node left then: 59 at the first (made once the first node is done), fewer each time.
      expect(replans[0]).toBe(59);
      expect(replans.reduce((sum, n) => sum + n, 0)).toBeLessThan((60 * 61) / 2 / 2);
    } finally {
      await runtime.close();
    }
  }, 120_000);
});
