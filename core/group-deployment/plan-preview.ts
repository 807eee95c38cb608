/** What `plan` shows an operator before anything runs: the order, and each group's nodes. */
import { plannedGroup, type DeploymentPlan } from './deployment-plan';

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
  };
}
