/**
 * The deployment plan: groups in dependency order with their nodes resolved. Fixed before anything
 * runs (a snapshot, unlike CRUS re-reading its group every step), and plain JSON so a workflow can
 * store it and pass it on.
 */
import type { InventoryNode } from '../site/site-nodes';
import { InvalidInputError, type FieldProblem } from '../errors';
import { shortList } from '../text';
import { findDependencyProblems } from './dependency-problems';
import { UnknownDeploymentGroupError } from '../errors';
import { stableTopologicalOrder } from '../graph/graph-algorithms';
import { groupFieldPath } from './strategy-problems';
import { ownValue } from './records';
import { findUnknownNodeNames, resolveSelectors } from './selectors';
import type { DeploymentStrategy, NodeConcurrency, StrategyGroup, SuccessCriteria } from './strategy';

export interface PlannedGroup {
  name: string;
  critical: boolean;
  dependsOn: readonly string[];
  /** Groups that list this one in depends_on, in deployment order. */
  dependants: readonly string[];
  /** Every node the selectors pick, in inventory order. The success criteria count all of them. */
  nodes: readonly string[];
  /**
   * The nodes this group submits: those no group earlier in the order picks. A node is handled
   * once, by the first group that picks it (Shipyard's de-duplication of overlapping groups).
   */
  actionableNodes: readonly string[];
  successCriteria?: SuccessCriteria;
  concurrency: NodeConcurrency;
}

export interface DeploymentPlan {
  /** Topological: every group after the groups it depends on; ties in document order. */
  order: readonly string[];
  /** By name; read through plannedGroup() to reject unknown names. */
  groups: Readonly<Record<string, PlannedGroup>>;
  /** Every node some group picks, in inventory order. */
  nodes: readonly string[];
  /** Only with `unreachableCriteria: 'report'`: the criteria no outcome can meet (else they are refused). */
  unreachableCriteria?: readonly FieldProblem[];
}

export interface PlanOptions {
  /**
   * `refuse` (the default: every surface that starts a deployment): a success criterion the plan shows
   * can never be met is an InvalidInputError, before any node is touched. `report`: it is returned in
   * `unreachableCriteria` instead (`rollout plan deploy` shows the plan and warns).
   */
  unreachableCriteria?: 'refuse' | 'report';
}

/**
 * Throws InvalidInputError if the groups reference each other badly (a strategy not from
 * parseDeploymentStrategy), name nodes the site lacks, or ask what their nodes can never give.
 */
export function planDeployment(strategy: DeploymentStrategy, inventory: readonly InventoryNode[], options: PlanOptions = {}): DeploymentPlan {
  const problems = findDependencyProblems(strategy.groups.map((group, index) => ({ index, name: group.name, dependsOn: group.dependsOn })));
  problems.push(...groupsNamingUnknownNodes(strategy, inventory));
  if (problems.length > 0) throw new InvalidInputError('deployment strategy', problems);

  const byName = new Map(strategy.groups.map((group) => [group.name, group]));
  const groupNamed = (name: string): StrategyGroup => {
    const group = byName.get(name);
    if (!group) throw new UnknownDeploymentGroupError(name);
    return group;
  };
  const order = stableTopologicalOrder([...byName.keys()], (name) => groupNamed(name).dependsOn);

  const dependants = new Map(order.map((name): [string, string[]] => [name, []]));
  for (const name of order) {
    for (const dependency of new Set(groupNamed(name).dependsOn)) dependants.get(dependency)?.push(name);
  }

  const handled = new Set<string>();
  const planned = order.map((name): PlannedGroup => {
    const group = groupNamed(name);
    const nodes = resolveSelectors(group.selectors, inventory);
    const actionableNodes = nodes.filter((node) => !handled.has(node));
    for (const node of actionableNodes) handled.add(node);
    return {
      name,
      critical: group.critical,
      dependsOn: [...new Set(group.dependsOn)],
      dependants: dependants.get(name) ?? [],
      nodes,
      actionableNodes,
      ...(group.successCriteria ? { successCriteria: group.successCriteria } : {}),
      concurrency: group.concurrency,
    };
  });

  const unreachable = unreachableCriteria(strategy, planned);
  if (unreachable.length > 0 && options.unreachableCriteria !== 'report') throw new InvalidInputError('deployment strategy', unreachable);
  return {
    order,
    groups: Object.fromEntries(planned.map((group) => [group.name, group])),
    nodes: [...new Set(inventory.map((node) => node.name))].filter((node) => handled.has(node)),
    ...(unreachable.length > 0 ? { unreachableCriteria: unreachable } : {}),
  };
}

/**
 * The success criteria that no outcome can meet, each named with its group, what it needs and the most
 * the group can reach: `minimum_successful_nodes` above the nodes the group selects (every one of them
 * counts, whichever group submits it, so that is the most that can succeed). A percentage is always
 * reachable (all nodes succeeding; an empty group counts as 100%), and so is `maximum_failed_nodes`.
 * Refused before anything runs: Shipyard ran such a group, prepared its nodes, then failed it.
 */
function unreachableCriteria(strategy: DeploymentStrategy, planned: readonly PlannedGroup[]): FieldProblem[] {
  const selected = new Map(planned.map((group) => [group.name, group.nodes.length]));
  return strategy.groups.flatMap((group, index) => {
    const minimum = group.successCriteria?.minimumSuccessfulNodes;
    const most = selected.get(group.name) ?? 0;
    if (minimum === undefined || minimum <= most) return [];
    const selects = most === 0 ? 'selects no node' : `selects ${most} node${most === 1 ? '' : 's'}`;
    return [
      {
        field: `${groupFieldPath(index, group.name)}.success_criteria.minimum_successful_nodes`,
        message: `needs ${minimum} successful nodes, but the group ${selects}: at most ${most} can succeed, so it can never be met`,
      },
    ];
  });
}

/** The planned group of that name; throws UnknownDeploymentGroupError (also for "constructor" and friends). */
export function plannedGroup(plan: DeploymentPlan, name: string): PlannedGroup {
  const group = ownValue(plan.groups, name);
  if (!group) throw new UnknownDeploymentGroupError(name);
  return group;
}

/**
 * Groups whose `node_names` name nodes the site does not have, critical or not, beside known names
 * or not: a typo that would otherwise deploy fewer nodes than asked (or "succeed" with 0). Refused
 * before anything runs, as `--nodes ghost` is, naming the group and the names.
 */
function groupsNamingUnknownNodes(strategy: DeploymentStrategy, inventory: readonly InventoryNode[]): FieldProblem[] {
  const unknown = findUnknownNodeNames(strategy, inventory);
  return strategy.groups.flatMap((group, index) => {
    const names = [...new Set(unknown.filter((entry) => entry.group === group.name).map((entry) => entry.nodeName))];
    if (names.length === 0) return [];
    return [
      {
        field: `groups[${index}] (${group.name}).node_names`,
        message: `no node of the site is named ${shortList(names.map((n) => `'${n}'`))}: every node a group names must exist`,
      },
    ];
  });
}
