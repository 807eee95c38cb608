/**
 * A cancelled run: no group or batch starts after the cancel, actions in flight finish, and the run
 * ends CANCELLED with the groups that did not (or did not fully) run named.
 */
import type { DeploymentPlan } from './deployment-plan';
import { groupRunState, nodeRunStage, type DeploymentRunState } from './deployment-run-state';
import { phaseNodes, phaseStartStage } from './deployment-run-step';
import { withEntries } from './records';
import { stageAfter, transitionStage, type DeploymentPhase, type DeploymentStage } from './stages';

export interface InterruptedPhase {
  group: string;
  phase: DeploymentPhase;
  /** Submitted nodes whose batch ran and succeeded. */
  succeededNodes: readonly string[];
  /** Submitted nodes whose batch ran and failed them (timeouts included). */
  failedNodes: readonly string[];
}

/**
 * A phase a cancel or a stop cut short (some of its batches never started): the nodes of the batches
 * that ran move on or fail as the provisioner reported; the others keep their stage, and so does the
 * group (NOT_STARTED or PREPARED): it is not judged on work it never did. The group remembers the
 * phase's nodes (GroupRunState.interrupted), so that a resume finishes the same phase, with the same
 * batches, before it is judged.
 */
export function applyInterruptedPhase(plan: DeploymentPlan, state: DeploymentRunState, result: InterruptedPhase): DeploymentRunState {
  const nodes = phaseNodes(plan, state, result.group, result.phase);
  const from = phaseStartStage(result.phase);
  // Only nodes still where the phase starts them: one an earlier cut of this phase recorded keeps its stage.
  const submitted = new Set(nodes.filter((node) => nodeRunStage(state, node) === from));
  const outcome = (reported: readonly string[], to: DeploymentStage) =>
    reported
      .filter((node) => submitted.has(node))
      .map((node): [string, DeploymentStage] => [node, transitionStage(`node ${node}`, nodeRunStage(state, node), to)]);
  const updates = [...outcome(result.succeededNodes, stageAfter(result.phase)), ...outcome(result.failedNodes, 'FAILED')];
  const group = groupRunState(state, result.group);
  return {
    groups: withEntries(state.groups, [[result.group, { ...group, interrupted: { phase: result.phase, nodes } }]]),
    nodes: updates.length === 0 ? state.nodes : withEntries(state.nodes, updates),
  };
}

export interface CancelledRunSummary {
  /** Groups that never started. */
  notStarted: string[];
  /** Groups left PREPARED: prepared, never deployed. */
  prepared: string[];
  /** The Fail/Succeed cause the workflow reports, naming both lists. */
  cause: string;
}

/** What a cancelled run left undone, in plan order. */
export function summarizeCancelledRun(plan: DeploymentPlan, state: DeploymentRunState): CancelledRunSummary {
  const at = (stage: DeploymentStage) => plan.order.filter((name) => groupRunState(state, name).stage === stage);
  const notStarted = at('NOT_STARTED');
  const prepared = at('PREPARED');
  const finished = plan.order.length - notStarted.length - prepared.length;
  const parts = [`${finished} of ${plan.order.length} group(s) finished`];
  if (prepared.length > 0) parts.push(`prepared, not deployed: ${prepared.join(', ')}`);
  if (notStarted.length > 0) parts.push(`not started: ${notStarted.join(', ')}`);
  return { notStarted, prepared, cause: `Deployment cancelled: ${parts.join('; ')}` };
}

/** Groups a dead run left mid-phase that a resumed run must pick up again: PREPARED ones (deploy was next). */
export function interruptedGroups(plan: DeploymentPlan, state: DeploymentRunState): string[] {
  return plan.order.filter((name) => groupRunState(state, name).stage === 'PREPARED');
}
