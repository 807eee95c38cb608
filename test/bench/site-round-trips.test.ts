import { SiteRoundTrips } from '../../bench/site-round-trips';
import type { Site } from '../../ports/site';

/** A site whose calls take a tick; the inventory's listNodes calls the workload manager itself (a connector's own call). */
function fakeSite(): Site {
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const workloadManager = {
    getNodes: async () => {
      await tick();
      return new Map();
    },
    drainNodes: async () => tick(),
  };
  return {
    workloadManager,
    bootService: { templateExists: async () => true },
    inventory: {
      listNodes: async () => {
        await workloadManager.getNodes();
        return [];
      },
    },
  } as unknown as Site;
}

describe('SiteRoundTrips', () => {
  it('counts the round trips each invocation waits on: overlapping calls once, a port calling another once, calls outside an invocation not', async () => {
    const site = fakeSite();
    const trips = new SiteRoundTrips();
    trips.watch(site);
    await site.workloadManager.getNodes([]);
    expect(trips.total).toBe(0);

    const increment = trips.wrapFunction('AdvanceWindow', async () => {
      await site.workloadManager.getNodes([]); // 1
      await Promise.all([site.workloadManager.drainNodes([], 'r'), site.bootService.templateExists('t')]); // 2: overlapping
      await site.inventory.listNodes(); // 3: its own call to the workload manager is part of it
      return null;
    });
    await increment({});
    expect(trips.total).toBe(3);
    // Two invocations at once each wait on their own round trip.
    await Promise.all([increment({}), increment({})]);
    expect(trips.total).toBe(9);
    // Per function: where the Lambda's share goes.
    await trips.wrapFunction('CheckBoot', async () => site.workloadManager.getNodes([]))({});
    expect(Object.fromEntries(trips.byFunction)).toEqual({ AdvanceWindow: { invocations: 3, roundTrips: 9 }, CheckBoot: { invocations: 1, roundTrips: 1 } });
  });
});
