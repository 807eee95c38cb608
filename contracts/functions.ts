/**
 * The Lambda functions of the workflows, by the name their ARN has in the ASL files
 * (`${<Name>FunctionArn}`), in the CDK stack (one Lambda each, handler `index.<Name>`) and in the
 * embedded engine. The activity tables are checked against these lists (`satisfies`), so a function
 * missing on either side is a compile error.
 */
export const ROLLING_UPGRADE_FUNCTION_NAMES = [
  'OpenSession',
  'StartStep',
  'CheckQuiesce',
  'BootStep',
  'CheckBoot',
  'EvaluateBoot',
  'CheckReturnToService',
  'AdvanceWindow',
  'AwaitOperator',
  'CancelSession',
  'CleanUp',
  'ReleaseSiteTriggers',
] as const;
export type RollingUpgradeFunctionName = (typeof ROLLING_UPGRADE_FUNCTION_NAMES)[number];

export const GROUP_DEPLOYMENT_FUNCTION_NAMES = [
  'StartDeployment',
  'PickReadyGroups',
  'PlanPhase',
  'StartBatch',
  'CheckBatch',
  'EvaluatePhase',
  'FailGroup',
  'FinishDeployment',
  'FailDeployment',
] as const;
export type GroupDeploymentFunctionName = (typeof GROUP_DEPLOYMENT_FUNCTION_NAMES)[number];

/** Task graphs (Fuel's granular deployment on the annealer): open the run, then one pass per increment. */
export const TASK_GRAPH_FUNCTION_NAMES = ['OpenTaskRun', 'AdvanceTaskRun'] as const;
export type TaskGraphFunctionName = (typeof TASK_GRAPH_FUNCTION_NAMES)[number];

/** The side-by-side environment upgrade (statemachines/environment-upgrade.asl.json). */
export const ENVIRONMENT_UPGRADE_FUNCTION_NAMES = [
  'OpenEnvironmentUpgrade',
  'CloneSeed',
  'AssignControllers',
  'PrepareRollingUpgrade',
  'FollowRollingUpgrade',
  'FailEnvironmentUpgrade',
] as const;
export type EnvironmentUpgradeFunctionName = (typeof ENVIRONMENT_UPGRADE_FUNCTION_NAMES)[number];

export type FunctionName = RollingUpgradeFunctionName | GroupDeploymentFunctionName | TaskGraphFunctionName | EnvironmentUpgradeFunctionName;
