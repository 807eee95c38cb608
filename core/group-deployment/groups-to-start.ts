/**
 * Which ready groups may start now. A group counts every node it selects in its criteria but
 * submits only the nodes no earlier group selects; so it may start only once the groups that own
 * its other nodes have finished, or it would be judged on nodes nobody has handled yet. The
 * earliest unfinished group in plan order always qualifies (its dependencies and the owners of its
 * nodes all come earlier), so the run never stalls.
 */
import { plannedGroup, type DeploymentPlan } from './deployment-plan';
import { groupRunState, readyGroups, type DeploymentRunState } from './deployment-run-state';

/** The group that submits each node: the first in plan order that selects it. */
export function nodeOwners(plan: DeploymentPlan): Map<string, string> {
  const owners = new Map<string, string>();
  for (const name of plan.order) for (const node of plannedGroup(plan, name).actionableNodes) owners.set(node, name);
  return owners;
}

export function groupsToStart(plan: DeploymentPlan, state: DeploymentRunState, limit: number): string[] {
  const owners = nodeOwners(plan);
  const finished = (group: string) => {
    const stage = groupRunState(state, group).stage;
    return stage === 'DEPLOYED' || stage === 'FAILED';
  };
  const starting: string[] = [];
  for (const name of readyGroups(plan, state)) {
    if (starting.length >= limit) break;
    const settled = plannedGroup(plan, name).nodes.every((node) => {
      const owner = owners.get(node);
      return owner === undefined || owner === name || finished(owner);
    });
    if (settled) starting.push(name);
  }
  return starting;
}
