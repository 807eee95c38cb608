/**
 * Shipyard's success criteria, decided in exact integer arithmetic. Shipyard compares
 * `succ / all * 100 >= needed` in floating point, where 29 of 100 comes out as 28.999… and fails
 * 29%; here `succ * 100 >= needed * all` decides, and floating point is only used for display.
 */
import { isSuccessfulAfter, type DeploymentPhase, type DeploymentStage } from './stages';
import type { SuccessCriteria } from './strategy';

/** Named as in the strategy document, since that is what an operator will look for. */
export type SuccessCriterionName = 'percent_successful_nodes' | 'minimum_successful_nodes' | 'maximum_failed_nodes';

export interface CriterionFailure {
  criteria: SuccessCriterionName;
  needed: number;
  /** For the percentage: rounded down to 2 decimals, so a failing value never displays as reaching `needed`. */
  actual: number;
}

export interface NodeCounts {
  /** Every node the group's selectors pick, including ones an earlier group handled. */
  total: number;
  succeeded: number;
}

/** Empty when every criterion present holds. A group with no nodes counts as 100% with 0 successes. */
export function evaluateSuccessCriteria(criteria: SuccessCriteria | undefined, counts: NodeCounts): CriterionFailure[] {
  const { total, succeeded } = counts;
  const failed = total - succeeded;
  const failures: CriterionFailure[] = [];
  const percent = criteria?.percentSuccessfulNodes;
  if (percent !== undefined && total > 0 && succeeded * 100 < percent * total) {
    failures.push({ criteria: 'percent_successful_nodes', needed: percent, actual: successPercentForDisplay(counts) });
  }
  const minimum = criteria?.minimumSuccessfulNodes;
  if (minimum !== undefined && succeeded < minimum) {
    failures.push({ criteria: 'minimum_successful_nodes', needed: minimum, actual: succeeded });
  }
  const maximumFailed = criteria?.maximumFailedNodes;
  if (maximumFailed !== undefined && failed > maximumFailed) {
    failures.push({ criteria: 'maximum_failed_nodes', needed: maximumFailed, actual: failed });
  }
  return failures;
}

/** Percentage of successes rounded down to 2 decimals; 100 for an empty group. */
export function successPercentForDisplay(counts: NodeCounts): number {
  if (counts.total === 0) return 100;
  return Math.floor((counts.succeeded * 10_000) / counts.total) / 100;
}

/** Counts a group's nodes that succeeded `phase`, whichever group handled them. */
export function countPhaseSuccesses(nodes: readonly string[], stageOf: (node: string) => DeploymentStage, phase: DeploymentPhase): NodeCounts {
  let succeeded = 0;
  for (const node of nodes) if (isSuccessfulAfter(phase, stageOf(node))) succeeded++;
  return { total: nodes.length, succeeded };
}
