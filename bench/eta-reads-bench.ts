import { performance } from 'node:perf_hooks';
import { EmbeddedRuntime } from '../local/embedded-runtime';
import { simulatedSiteClients } from '../local/simulated-site-clients';
import type { SiteClients } from '../adapters/site/create-site-clients';
import { fleet, fleetUpgradeRequest } from './rolling-upgrade-bench';

/**
 * The site reads of a whole window run on the embedded engine (virtual time), counted at the site's
 * clients: the workload manager's node reads and job ends, the inventory's listings, each as requests
 * and as nodes read. In plan order the window reads no job ends of its own: `getJobEnds` is the ETA's
 * re-plan alone (lambdas/activities/rolling-upgrade/run-estimate.ts), which reads every node left.
 */

export interface EtaReadsFigures {
  label: string;
  outcome: string;
  /** Job-end reads: one per ETA re-plan (plan order). */
  replans: number;
  /** Nodes read at the site by kind: `getNodes` names, `getJobEnds` names, the inventory's nodes (listed, or answered by its getNodes). */
  nodesRead: { wlm: number; jobEnds: number; inventory: number };
  requests: { wlm: number; jobEnds: number; inventory: number };
  /** HTTP requests the inventory (HSM) answered: two a listing, two a chunk of ids of getNodes. */
  inventoryHttp: number;
  wallSeconds: number;
}

export async function benchEtaReads(nodes: number, maxUnavailable: number): Promise<EtaReadsFigures> {
  const requests = { wlm: 0, jobEnds: 0, inventory: 0 };
  const nodesRead = { wlm: 0, jobEnds: 0, inventory: 0 };
  let inventoryHttp = 0;
  const runtime = await EmbeddedRuntime.start({
    site: fleet({ name: 'eta', nodes, stepSize: maxUnavailable, bootFailEvery: 97, busyEvery: 50 }),
    connectors: (simulator) => {
      // The requests HSM answers, counted where the simulator serves them.
      const handle = simulator.handle.bind(simulator);
      simulator.handle = (request) => {
        if (new URL(request.url, 'http://sim').pathname.startsWith('/hsm/')) inventoryHttp++;
        return handle(request);
      };
      return counted(simulatedSiteClients(simulator), requests, nodesRead);
    },
  });
  try {
    const started = performance.now();
    const run = await runtime.run('rollingUpgrade', { ...fleetUpgradeRequest({ stepSize: maxUnavailable }), mode: 'window', maxUnavailable });
    const outcome = await run.outcome;
    const session = await runtime.store.getSession(run.id);
    return {
      label: `window, ${nodes.toLocaleString('en-US')} nodes, maxUnavailable ${maxUnavailable}`,
      outcome: `${outcome.status}, ${session?.progress.counts?.upgraded ?? 0} upgraded / ${session?.progress.counts?.failed ?? 0} failed`,
      replans: requests.jobEnds,
      nodesRead,
      requests,
      inventoryHttp,
      wallSeconds: (performance.now() - started) / 1000,
    };
  } finally {
    await runtime.close();
  }
}

/** The site's clients with their node reads counted. */
function counted(site: SiteClients, requests: EtaReadsFigures['requests'], nodesRead: EtaReadsFigures['nodesRead']): SiteClients {
  const wm = site.workloadManager;
  const inventory = site.inventory;
  const getJobEnds = wm.getJobEnds?.bind(wm);
  const workloadManager = Object.assign(Object.create(wm) as typeof wm, {
    getNodes: async (...args: Parameters<typeof wm.getNodes>) => {
      requests.wlm++;
      nodesRead.wlm += args[0].length;
      return wm.getNodes(...args);
    },
    ...(getJobEnds
      ? {
          getJobEnds: async (names: readonly string[]) => {
            requests.jobEnds++;
            nodesRead.jobEnds += names.length;
            return getJobEnds(names);
          },
        }
      : {}),
  });
  const countedInventory = Object.assign(Object.create(inventory) as typeof inventory, {
    listNodes: async () => {
      requests.inventory++;
      const listed = await inventory.listNodes();
      nodesRead.inventory += listed.length;
      return listed;
    },
    ...(inventory.getNodes
      ? {
          getNodes: async (names: readonly string[]) => {
            requests.inventory++;
            const read = await inventory.getNodes!(names);
            nodesRead.inventory += read.size;
            return read;
          },
        }
      : {}),
  });
  return { ...site, workloadManager, inventory: countedInventory };
}

export function renderEtaReads(f: EtaReadsFigures): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return [
    `${f.label}: ${f.outcome} [${f.wallSeconds.toFixed(0)} s wall]`,
    `  ETA re-plans (job-end reads)     ${n(f.replans)}`,
    `  site nodes read: wlm ${n(f.nodesRead.wlm)} (${n(f.requests.wlm)} requests), job ends ${n(f.nodesRead.jobEnds)}, inventory ${n(f.nodesRead.inventory)} (${n(f.requests.inventory)} reads, ${n(f.inventoryHttp)} HTTP requests)`,
    `  site nodes read in all           ${n(f.nodesRead.wlm + f.nodesRead.jobEnds + f.nodesRead.inventory)}`,
  ].join('\n');
}
