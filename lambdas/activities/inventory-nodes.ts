import type { Inventory, InventoryNode } from '../../ports/site';

/**
 * The inventory's nodes of these names (absent: unknown): its `getNodes` where it reads some nodes
 * alone, else its whole listing, kept to those names (a site whose inventory lacks it keeps working).
 */
export async function readInventoryNodes(inventory: Inventory, names: readonly string[]): Promise<Map<string, InventoryNode>> {
  if (names.length === 0) return new Map();
  if (inventory.getNodes) return inventory.getNodes(names);
  const wanted = new Set(names);
  return new Map((await inventory.listNodes()).filter((n) => wanted.has(n.name)).map((n) => [n.name, n]));
}
