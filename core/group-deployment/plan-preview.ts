/** What `plan` shows an operator before anything runs: the order, and each group's nodes. */
import { plannedGroup, type DeploymentPlan } from './deployment-plan';
import type { UnknownNodeName } from './selectors';

export interface GroupPreview {
  critical: boolean;
  dependsOn: readonly string[];
  nodes: readonly string[];
  actionableNodes: readonly string[];
}

export interface DeploymentPlanPreview {
  order: readonly string[];
  /** In deployment order. */
  groups: Record<string, GroupPreview>;
  /** `node_names` entries naming no inventory node (warnings, not errors). */
  unknownNodeNames: readonly UnknownNodeName[];
}

export function previewDeploymentPlan(plan: DeploymentPlan): DeploymentPlanPreview {
  return {
    order: plan.order,
    groups: Object.fromEntries(
      plan.order.map((name) => {
        const { critical, dependsOn, nodes, actionableNodes } = plannedGroup(plan, name);
        return [name, { critical, dependsOn, nodes, actionableNodes }];
      }),
    ),
    unknownNodeNames: plan.unknownNodeNames,
  };
}
