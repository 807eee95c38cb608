import type { SiteClients } from '../../../adapters/site/create-site-clients';
import type { Inventory } from '../../../ports/site';
import { simulatedSiteClients } from '../../../local/simulated-site-clients';
import { buildSite, upgradeRequest } from '../../support/sites';
import { runUpgrade, startTestRuntime } from '../../support/embedded';
import { readInventoryNodes } from '../../../lambdas/activities/inventory-nodes';

interface InventoryReads {
  listings: number;
  /** Names asked of getNodes, per call. */
  asked: number[];
}

/** The site's clients with the inventory's reads counted; `withoutGetNodes`: an inventory that has no getNodes (the fallback). */
function counted(site: SiteClients, reads: InventoryReads, withoutGetNodes: boolean): SiteClients {
  const inventory = site.inventory;
  const wrapped: Inventory = {
    getGroupMembers: (label) => inventory.getGroupMembers(label),
    addGroupMembers: (label, names) => inventory.addGroupMembers(label, names),
    removeGroupMembers: (label, names) => inventory.removeGroupMembers(label, names),
    listNodes: () => {
      reads.listings++;
      return inventory.listNodes();
    },
    ...(withoutGetNodes
      ? {}
      : {
          getNodes: (names: readonly string[]) => {
            reads.asked.push(names.length);
            return inventory.getNodes!(names);
          },
        }),
  };
  return { ...site, inventory: wrapped };
}

async function windowRun(withoutGetNodes: boolean, haltOnOutsideFailures = false) {
  const reads: InventoryReads = { listings: 0, asked: [] };
  const runtime = await startTestRuntime({
    site: buildSite(40, { node: (i) => (i % 7 === 3 ? { faults: { boot: 'fail' } } : {}) }),
    connectors: (simulator) => counted(simulatedSiteClients(simulator), reads, withoutGetNodes),
  });
  try {
    const { report } = await runUpgrade(
      runtime,
      upgradeRequest({ mode: 'window', maxUnavailable: 4, ...(haltOnOutsideFailures ? { haltOnOutsideFailures } : {}) }),
    );
    return { reads, counts: report.counts };
  } finally {
    await runtime.close();
  }
}

describe('mode window: the inventory is read for the nodes an increment looks at, not listed whole', () => {
  it('asks getNodes for the nodes in flight and the candidates (O(cap)), lists nothing; without getNodes, one listing per read and the same outcome', async () => {
    const named = await windowRun(false);
    expect(named.reads.listings).toBe(0);
    expect(named.reads.asked.length).toBeGreaterThan(10);
    // An increment: in flight (at most 4) and a scan batch (32); the ETA's re-plan: the nodes left. Never the 40-node fleet.
    expect(Math.max(...named.reads.asked)).toBeLessThanOrEqual(36);
    expect(named.counts).toMatchObject({ UPGRADED: 34, FAILED: 6 });

    const fallback = await windowRun(true);
    expect(fallback.reads.asked).toEqual([]);
    expect(fallback.reads.listings).toBeGreaterThan(10);
    expect(fallback.counts).toEqual(named.counts);
  }, 180_000);

  it('haltOnOutsideFailures: one listing per increment serves every read (the nodes outside the plan need the whole inventory)', async () => {
    const { reads, counts } = await windowRun(false, true);
    expect(reads.listings).toBeGreaterThan(10);
    // What getNodes still answers is the ETA's re-plans (plan-site.ts: the nodes left, at most 20 a run), none of the increments'.
    expect(reads.asked.length).toBeLessThanOrEqual(20);
    expect(reads.asked).toEqual([...reads.asked].sort((a, b) => b - a));
    expect(counts).toMatchObject({ UPGRADED: 34, FAILED: 6 });
  }, 180_000);
});

describe('readInventoryNodes', () => {
  const nodes = [1, 2, 3].map((nid) => ({ name: `n${nid}`, nid, role: 'compute', tags: [], labels: {} }));
  const base: Inventory = {
    getGroupMembers: async () => [],
    addGroupMembers: async () => undefined,
    removeGroupMembers: async () => undefined,
    listNodes: async () => nodes,
  };

  it("filters the inventory's listing when it has no getNodes, and reads nothing for no names", async () => {
    let listings = 0;
    const inventory: Inventory = { ...base, listNodes: async () => (listings++, nodes) };
    await expect(readInventoryNodes(inventory, ['n3', 'ghost', 'n1'])).resolves.toEqual(
      new Map([
        ['n1', nodes[0]],
        ['n3', nodes[2]],
      ]),
    );
    await expect(readInventoryNodes(inventory, [])).resolves.toEqual(new Map());
    expect(listings).toBe(1);
  });

  it('uses getNodes where the inventory has it, never its listing', async () => {
    const inventory: Inventory = {
      ...base,
      listNodes: async () => Promise.reject(new Error('listed')),
      getNodes: async (names) => new Map(nodes.filter((n) => names.includes(n.name)).map((n) => [n.name, n])),
    };
    await expect(readInventoryNodes(inventory, ['n2'])).resolves.toEqual(new Map([['n2', nodes[1]]]));
  });
});
