/**
 * Which inventory nodes a group's selectors pick. What Shipyard asks Drydock to compute, done here
 * against the inventory: values in a criterion are OR'ed, criteria in a selector intersected,
 * selectors unioned; an empty selector list, or a selector with no criteria, picks every node.
 */
import type { InventoryNode } from '../site/site-nodes';
import type { DeploymentStrategy, GroupSelector, NodeLabel } from './strategy';

type NodeTest = (node: InventoryNode) => boolean;

/** Sets built once per selector, so a 10,000-node inventory costs one pass per group. */
function compileSelector(selector: GroupSelector): NodeTest | 'all' {
  const tests: NodeTest[] = [];
  if (selector.nodeNames.length > 0) {
    const names = new Set(selector.nodeNames);
    tests.push((node) => names.has(node.name));
  }
  if (selector.rackNames.length > 0) {
    const racks = new Set(selector.rackNames);
    tests.push((node) => node.rack !== undefined && racks.has(node.rack));
  }
  if (selector.nodeTags.length > 0) {
    const tags = new Set(selector.nodeTags);
    tests.push((node) => node.tags.some((tag) => tags.has(tag)));
  }
  if (selector.nodeLabels.length > 0) {
    const labels = selector.nodeLabels;
    tests.push((node) => labels.some((label) => hasLabel(node, label)));
  }
  return tests.length === 0 ? 'all' : (node) => tests.every((test) => test(node));
}

function hasLabel(node: InventoryNode, label: NodeLabel): boolean {
  // Own properties only: a label key such as "constructor" must not match Object.prototype.
  return Object.hasOwn(node.labels, label.key) && node.labels[label.key] === label.value;
}

/** Names of the nodes the selectors pick, in inventory order, each once (even if the inventory repeats a name). */
export function resolveSelectors(selectors: readonly GroupSelector[], inventory: readonly InventoryNode[]): string[] {
  const compiled = selectors.map(compileSelector);
  const selectsAll = compiled.length === 0 || compiled.includes('all');
  const tests = compiled.filter((test): test is NodeTest => test !== 'all');
  const picked = new Set<string>();
  for (const node of inventory) {
    if (selectsAll || tests.some((test) => test(node))) picked.add(node.name);
  }
  return [...picked];
}

/** A `node_names` entry that names no inventory node: worth a warning, not an error (the node may come later). */
export interface UnknownNodeName {
  group: string;
  selector: number;
  nodeName: string;
}

export function findUnknownNodeNames(strategy: DeploymentStrategy, inventory: readonly InventoryNode[]): UnknownNodeName[] {
  const known = new Set(inventory.map((node) => node.name));
  return strategy.groups.flatMap((group) =>
    group.selectors.flatMap((selector, index) =>
      selector.nodeNames.filter((nodeName) => !known.has(nodeName)).map((nodeName) => ({ group: group.name, selector: index, nodeName })),
    ),
  );
}
