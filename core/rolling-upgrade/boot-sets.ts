/**
 * Which nodes a BOS reboot session would act upon, decided before any node is drained. BOS's
 * session setup (Cray-HPE/bos src/bos/operators/session_setup.py, _get_boot_set_component_list)
 * takes each boot set of the session template: node_list, then the members of node_groups, then the
 * nodes of node_roles_groups (HSM Role, or Role_SubRole: src/bos/common/clients/hsm/inventory.py);
 * intersects that with the session's limit; and drops the nodes disabled in HSM. A node of our plan
 * outside every boot set, or disabled, is simply not rebooted: the session would end without it.
 * Such a node is failed at once with its own reason instead of being drained for nothing.
 */

import type { BootSetSpec } from '../site/site-nodes';

/** What the check needs to know of the inventory: each group's members, each node's role, subrole and enablement. */
export interface BootSetInventory {
  groupMembers: ReadonlyMap<string, ReadonlySet<string>>;
  nodes: ReadonlyMap<string, { role: string; subrole?: string; enabled: boolean }>;
}

/** The nodes of `plan` a reboot with these boot sets would not act upon, each with why. */
export function nodesOutsideBootSets(plan: readonly string[], bootSets: readonly BootSetSpec[], inventory: BootSetInventory): Map<string, string> {
  const covered = new Set<string>();
  const roles = new Map<string, Set<string>>();
  for (const [name, node] of inventory.nodes) {
    const add = (key: string) => roles.set(key, (roles.get(key) ?? new Set()).add(name));
    add(node.role);
    if (node.subrole) add(`${node.role}_${node.subrole}`);
  }
  for (const set of bootSets) {
    // Boot sets for another architecture than the simulated and usual X86 take no X86 node (BOS's _apply_arch).
    for (const name of set.nodeList ?? []) covered.add(name);
    for (const label of set.nodeGroups ?? [])
      for (const name of inventory.groupMembers.get(label.toLowerCase()) ?? inventory.groupMembers.get(label) ?? []) covered.add(name);
    for (const role of set.nodeRolesGroups ?? []) for (const name of roles.get(role) ?? []) covered.add(name);
  }
  const outside = new Map<string, string>();
  for (const name of plan) {
    const node = inventory.nodes.get(name);
    if (!covered.has(name)) outside.set(name, 'in no boot set of the session template (node_list, node_groups, node_roles_groups)');
    else if (node && !node.enabled) outside.set(name, 'disabled in HSM (BOS leaves disabled nodes out)');
  }
  return outside;
}

/** The groups the boot sets name (node_groups): the only groups the check has to read. */
export function bootSetGroups(bootSets: readonly BootSetSpec[]): string[] {
  return [...new Set(bootSets.flatMap((set) => set.nodeGroups ?? []))];
}
