import type { PlannedNodeSite } from '../../../core/rolling-upgrade/upgrade-plan';
import type { Site } from '../../../ports/site';
import { readInventoryNodes } from '../inventory-nodes';

/**
 * What the site says now of the nodes a plan covers (core/rolling-upgrade/upgrade-plan.ts), read
 * through the workflow's connectors: the workload manager's state and job ends, the inventory's
 * alive, available and rack. `rollout plan upgrade` reads it once; a running session's ETA reads it
 * for the nodes it has left.
 */
export async function readPlanSite(site: Pick<Site, 'workloadManager' | 'inventory'>, names: readonly string[]): Promise<Map<string, PlannedNodeSite>> {
  const [wlm, jobEnds, inventory] = await Promise.all([
    site.workloadManager.getNodes(names),
    site.workloadManager.getJobEnds ? site.workloadManager.getJobEnds(names) : Promise.resolve(new Map<string, number>()),
    // The nodes named alone (the ETA re-plans with the nodes it has left), not the whole inventory.
    readInventoryNodes(site.inventory, names),
  ]);
  return new Map<string, PlannedNodeSite>(
    names.map((name) => {
      const inv = inventory.get(name);
      const node: PlannedNodeSite = { alive: inv?.alive !== false, available: inv?.available !== false };
      const w = wlm.get(name);
      if (w) node.wlm = w;
      if (inv?.rack !== undefined) node.rack = inv.rack;
      const end = jobEnds.get(name);
      if (end !== undefined) node.jobEndsAt = end;
      return [name, node];
    }),
  );
}
