/**
 * What a phase submits and what its result does to the run. Which group runs next is
 * groupsToStart's decision (Pick Ready Groups), the phases of a group the DeployGroup workflow's.
 */
import { plannedGroup, type DeploymentPlan } from './deployment-plan';
import { cascadeFailure, groupRunState, isGroupReady, nodeRunStage, type DeploymentRunState } from './deployment-run-state';
import { UnexpectedPhaseResultError } from '../errors';
import { ownValue, withEntries } from './records';
import { stageAfter, transitionStage, type DeploymentPhase, type DeploymentStage } from './stages';
import { countPhaseSuccesses, evaluateSuccessCriteria } from './success-criteria';

/** The stage a phase moves nodes on from: NOT_STARTED to prepare, PREPARED to deploy. */
export function phaseStartStage(phase: DeploymentPhase): DeploymentStage {
  return phase === 'PREPARE' ? 'NOT_STARTED' : 'PREPARED';
}

/**
 * The nodes a phase submits: the group's actionable nodes still at the stage the phase starts from
 * (NOT_STARTED to prepare; PREPARED to deploy, so nodes that failed to prepare are left out). A phase
 * a stop or cancel cut short submits the nodes it did when it began (GroupRunState.interrupted), its
 * recorded ones included, so that it resumes with the same batches.
 */
export function phaseNodes(plan: DeploymentPlan, state: DeploymentRunState, group: string, phase: DeploymentPhase): string[] {
  const interrupted = groupRunState(state, group).interrupted;
  if (interrupted?.phase === phase) return [...interrupted.nodes];
  const from = phaseStartStage(phase);
  return plannedGroup(plan, group).actionableNodes.filter((node) => nodeRunStage(state, node) === from);
}

export interface PhaseResult {
  group: string;
  phase: DeploymentPhase;
  /** Submitted nodes the provisioner reports done. Every other submitted node failed (a timeout included). */
  succeededNodes: readonly string[];
}

/**
 * Records a phase: submitted nodes move on or fail, then the group's success criteria are judged
 * over all its nodes. A miss fails the group and everything depending on it (deploy is skipped).
 * Reported nodes that were not submitted are ignored. Throws UnexpectedPhaseResultError for a
 * group not waiting for this phase (e.g. a replayed result).
 */
export function applyPhaseResult(plan: DeploymentPlan, state: DeploymentRunState, result: PhaseResult): DeploymentRunState {
  const { group, phase } = result;
  const planned = plannedGroup(plan, group);
  const groupStage = groupRunState(state, group).stage;
  expectPhase(plan, state, group, phase, groupStage);

  const succeeded = new Set(result.succeededNodes);
  // Nodes a cut-short run of this phase recorded already keep their stage; the others move on or fail.
  const from = phaseStartStage(phase);
  const nodeUpdates = phaseNodes(plan, state, group, phase)
    .filter((node) => nodeRunStage(state, node) === from)
    .map((node): [string, DeploymentStage] => {
      const to = succeeded.has(node) ? stageAfter(phase) : 'FAILED';
      return [node, transitionStage(`node ${node}`, nodeRunStage(state, node), to)];
    });
  const nodes = withEntries(state.nodes, nodeUpdates);
  const withNodes: DeploymentRunState = { ...state, nodes };

  const counts = countPhaseSuccesses(planned.nodes, (node) => ownValue(nodes, node) ?? 'NOT_STARTED', phase);
  const failures = evaluateSuccessCriteria(planned.successCriteria, counts);
  if (failures.length > 0) return cascadeFailure(plan, withNodes, group, failures);
  const stage = transitionStage(`group ${group}`, groupStage, stageAfter(phase));
  return { ...withNodes, groups: withEntries(state.groups, [[group, { stage, failures: [] }]]) };
}

function expectPhase(plan: DeploymentPlan, state: DeploymentRunState, group: string, phase: DeploymentPhase, stage: DeploymentStage): void {
  if (phase === 'DEPLOY' && stage !== 'PREPARED') {
    throw new UnexpectedPhaseResultError(group, phase, stage, 'only a PREPARED group is deployed');
  }
  if (phase === 'PREPARE' && !isGroupReady(plan, state, group)) {
    const reason = stage === 'NOT_STARTED' ? 'its dependencies are not all DEPLOYED' : `it is already ${stage}`;
    throw new UnexpectedPhaseResultError(group, phase, stage, reason);
  }
}
