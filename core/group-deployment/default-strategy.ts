/**
 * The strategy used when none is given: Shipyard's single critical group "default" over all nodes,
 * requiring 100% success; or, for an explicit node list, the same group limited to those nodes.
 */
import type { InventoryNode } from '../site/site-nodes';
import { InvalidInputError } from '../errors';
import { parseDeploymentStrategy } from './parse-strategy';
import { DEFAULT_NODE_CONCURRENCY } from './strategy-schema';
import type { DeploymentStrategy, GroupSelector } from './strategy';

export const DEFAULT_GROUP_NAME = 'default';

function defaultStrategy(selectors: readonly GroupSelector[]): DeploymentStrategy {
  return {
    groups: [
      {
        name: DEFAULT_GROUP_NAME,
        critical: true,
        dependsOn: [],
        selectors,
        successCriteria: { percentSuccessfulNodes: 100 },
        concurrency: DEFAULT_NODE_CONCURRENCY,
      },
    ],
  };
}

export function defaultDeploymentStrategy(): DeploymentStrategy {
  return defaultStrategy([]);
}

/** Throws InvalidInputError naming each unknown node (`nodes[i]`), or when the list is empty. */
export function deploymentStrategyForNodes(nodeNames: readonly string[], inventory: readonly InventoryNode[]): DeploymentStrategy {
  if (nodeNames.length === 0) {
    throw new InvalidInputError('node selection', [{ field: 'nodes', message: 'name at least one node' }]);
  }
  const known = new Set(inventory.map((node) => node.name));
  const problems = nodeNames.flatMap((name, i) => (known.has(name) ? [] : [{ field: `nodes[${i}]`, message: `unknown node '${name}'` }]));
  if (problems.length > 0) throw new InvalidInputError('node selection', problems);
  return defaultStrategy([{ nodeNames: [...new Set(nodeNames)], nodeLabels: [], nodeTags: [], rackNames: [] }]);
}

/** `"a, b,,c"` → `['a', 'b', 'c']`: trimmed, blanks dropped (a trailing comma is harmless), repeats removed. */
export function parseNodeNameList(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== ''),
    ),
  ];
}

/**
 * The one rule for which strategy a deployment runs (the workflow, `rollout deploy` and `rollout plan
 * deploy` all ask here): a strategy given is parsed; else a node list gives the default group over
 * just those nodes; else the default group over every node.
 */
export function selectDeploymentStrategy(
  request: { strategy?: unknown; nodes?: readonly string[] | undefined },
  inventory: readonly InventoryNode[],
): DeploymentStrategy {
  if (request.strategy !== undefined) return parseDeploymentStrategy(request.strategy);
  if (request.nodes !== undefined) return deploymentStrategyForNodes(request.nodes, inventory);
  return defaultDeploymentStrategy();
}
