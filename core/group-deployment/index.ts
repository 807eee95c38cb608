/**
 * Group deployment's pure core: read a DeploymentStrategy, plan it against an inventory, and step
 * a run through it. No I/O; the workflow supplies the inventory and the provisioner's results.
 */
export { parseDeploymentStrategy } from './parse-strategy';
export { defaultDeploymentStrategy, deploymentStrategyForNodes, parseNodeNameList, selectDeploymentStrategy, DEFAULT_GROUP_NAME } from './default-strategy';
export {
  deploymentStrategyJsonSchema,
  DEPLOYMENT_STRATEGY_SCHEMA_ID,
  DEFAULT_NODE_CONCURRENCY,
} from './strategy-schema';
export type {
  DeploymentStrategy,
  StrategyGroup,
  GroupSelector,
  NodeLabel,
  SuccessCriteria,
  NodeConcurrency,
} from './strategy';
export { findDependencyProblems, type GroupDependencies } from './dependency-problems';
export { resolveSelectors, findUnknownNodeNames, type UnknownNodeName } from './selectors';
export {
  evaluateSuccessCriteria,
  countPhaseSuccesses,
  successPercentForDisplay,
  type CriterionFailure,
  type SuccessCriterionName,
  type NodeCounts,
} from './success-criteria';
export {
  DEPLOYMENT_STAGES,
  canTransition,
  transitionStage,
  stageAfter,
  isSuccessfulAfter,
  type DeploymentStage,
  type DeploymentPhase,
} from './stages';
export { planDeployment, plannedGroup, type DeploymentPlan, type PlannedGroup } from './deployment-plan';
export { phaseWork, MAX_CONCURRENT_BATCHES, type PhaseWork } from './node-batches';
export {
  startDeploymentRun,
  readyGroups,
  isGroupReady,
  cascadeFailure,
  groupRunState,
  nodeRunStage,
  type DeploymentRunState,
  type GroupRunState,
} from './deployment-run-state';
export {
  phaseNodes,
  applyPhaseResult,
  type PhaseResult,
} from './deployment-run-step';
export { groupsToStart, nodeOwners } from './groups-to-start';
export { applyInterruptedPhase, interruptedGroups, summarizeCancelledRun, type CancelledRunSummary, type InterruptedPhase } from './deployment-cancel';
export { summarizeDeployment, summarizeDeploymentRun, type DeploymentRunResult, type DeploymentSummary, type GroupRunResult } from './deployment-run-result';
export { previewDeploymentPlan, type DeploymentPlanPreview, type GroupPreview } from './plan-preview';
export { deploymentPlanMermaid } from './plan-mermaid';
