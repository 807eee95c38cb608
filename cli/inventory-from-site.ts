import type { SiteSource } from '../local/open-runtime';
import { connectProfile } from '../local/profile-connection';
import type { InventoryNode } from '../ports/site';
import type { SiteDefinition } from '../simulator/site-file';

/**
 * The inventory a simulated site serves (what `Inventory.listNodes()` answers), read straight from
 * the site file, so a plan can be shown without starting the simulator. Site file order is kept:
 * group node lists follow inventory order.
 */
export function inventoryFromSite(site: Pick<SiteDefinition, 'nodes'>): InventoryNode[] {
  return site.nodes.map(({ name, nid, rack, role, roles, tags, labels, alive, available }) => ({
    name,
    nid,
    ...(rack === undefined ? {} : { rack }),
    role,
    tags: [...tags],
    roles: [...roles],
    labels: { ...labels },
    alive,
    available,
  }));
}

/** The inventory a plan or a deployment is checked against: the site file's, or the profile's inventory service. */
export async function inventoryOf(source: SiteSource): Promise<InventoryNode[]> {
  if (source.kind === 'simulated') return inventoryFromSite(source.definition);
  // The process's one connection to the profile's site: the run started after this check uses it too.
  const { site } = (await connectProfile(source)).site;
  return site.inventory.listNodes();
}
