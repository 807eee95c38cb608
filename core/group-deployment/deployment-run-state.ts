/**
 * The state of one deployment run: a stage per group and per node, plain JSON so a workflow can
 * keep it between steps. Functions here return a new state; none mutates its input.
 */
import { plannedGroup, type DeploymentPlan } from './deployment-plan';
import { UnknownDeploymentGroupError } from '../errors';
import { descendantsOf } from '../graph/graph-algorithms';
import { ownValue, withEntries } from './records';
import { transitionStage, type DeploymentPhase, type DeploymentStage } from './stages';
import type { CriterionFailure } from './success-criteria';

export interface GroupRunState {
  stage: DeploymentStage;
  /** The criteria the group missed in the phase that failed it. */
  failures: readonly CriterionFailure[];
  /** Set when the group failed because a group it depends on, directly or not, failed. */
  blockedBy?: string;
  /** Why the group's workflow broke, when it did (a site service that kept failing, ...): not a node failure. */
  cause?: string;
  /**
   * A phase a stop (or cancel) cut short: the nodes it submits, as when it began. Its nodes that ran are
   * recorded already; a resumed run runs the same phase over the same nodes, so its batches keep their
   * numbers (and the site actions named after them), the batches that ran are read back and the rest
   * run; the phase is judged once it has finished, over all of them.
   */
  interrupted?: { phase: DeploymentPhase; nodes: readonly string[] };
}

export interface DeploymentRunState {
  groups: Readonly<Record<string, GroupRunState>>;
  nodes: Readonly<Record<string, DeploymentStage>>;
}

export function startDeploymentRun(plan: DeploymentPlan): DeploymentRunState {
  return {
    groups: Object.fromEntries(plan.order.map((name) => [name, { stage: 'NOT_STARTED', failures: [] }])),
    nodes: Object.fromEntries(plan.nodes.map((node) => [node, 'NOT_STARTED'])),
  };
}

export function groupRunState(state: DeploymentRunState, group: string): GroupRunState {
  const found = ownValue(state.groups, group);
  if (!found) throw new UnknownDeploymentGroupError(group);
  return found;
}

/** A node no group picks has never started. */
export function nodeRunStage(state: DeploymentRunState, node: string): DeploymentStage {
  return ownValue(state.nodes, node) ?? 'NOT_STARTED';
}

/**
 * NOT_STARTED groups whose dependencies are all DEPLOYED, in deployment order. A group whose
 * dependency failed is never ready: cascadeFailure has already failed it.
 */
export function readyGroups(plan: DeploymentPlan, state: DeploymentRunState): string[] {
  return plan.order.filter((name) => isGroupReady(plan, state, name));
}

export function isGroupReady(plan: DeploymentPlan, state: DeploymentRunState, group: string): boolean {
  return (
    groupRunState(state, group).stage === 'NOT_STARTED' &&
    plannedGroup(plan, group).dependsOn.every((dependency) => groupRunState(state, dependency).stage === 'DEPLOYED')
  );
}

/**
 * Fails `group` (with the criteria it missed) and every group that depends on it, directly or
 * not; those record `blockedBy: group`. Descendants that already failed are left as they are.
 */
export function cascadeFailure(
  plan: DeploymentPlan,
  state: DeploymentRunState,
  group: string,
  failures: readonly CriterionFailure[] = [],
  cause?: string,
): DeploymentRunState {
  const failed = (name: string, update: Omit<GroupRunState, 'stage'>): [string, GroupRunState] => {
    const stage = transitionStage(`group ${name}`, groupRunState(state, name).stage, 'FAILED');
    return [name, { ...update, stage }];
  };
  const updates = [failed(group, { failures, ...(cause === undefined ? {} : { cause }) })];
  for (const descendant of descendantsOf(group, (name) => plannedGroup(plan, name).dependants)) {
    if (groupRunState(state, descendant).stage !== 'FAILED') updates.push(failed(descendant, { failures: [], blockedBy: group }));
  }
  return { ...state, groups: withEntries(state.groups, updates) };
}
