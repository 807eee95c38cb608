/**
 * A cancelled run: no group or batch starts after the cancel, actions in flight finish, and the run
 * ends CANCELLED with the groups that did not (or did not fully) run named.
 */
import type { DeploymentPlan } from './deployment-plan';
import { groupRunState, nodeRunStage, type DeploymentRunState } from './deployment-run-state';
import { phaseNodes } from './deployment-run-step';
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
 * A phase the cancel cut short (some of its batches never started): the nodes of the batches that
 * ran move on or fail as the provisioner reported; the others keep their stage, and so does the
 * group (NOT_STARTED or PREPARED): it is not judged on work it never did.
 */
export function applyInterruptedPhase(plan: DeploymentPlan, state: DeploymentRunState, result: InterruptedPhase): DeploymentRunState {
  const submitted = new Set(phaseNodes(plan, state, result.group, result.phase));
  const outcome = (nodes: readonly string[], to: DeploymentStage) =>
    nodes
      .filter((node) => submitted.has(node))
      .map((node): [string, DeploymentStage] => [node, transitionStage(`node ${node}`, nodeRunStage(state, node), to)]);
  const updates = [...outcome(result.succeededNodes, stageAfter(result.phase)), ...outcome(result.failedNodes, 'FAILED')];
  return updates.length === 0 ? state : { ...state, nodes: withEntries(state.nodes, updates) };
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
