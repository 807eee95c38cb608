/**
 * The Lambda functions of both workflows, by the name their ARN has in the ASL files
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
] as const;
export type GroupDeploymentFunctionName = (typeof GROUP_DEPLOYMENT_FUNCTION_NAMES)[number];

export type FunctionName = RollingUpgradeFunctionName | GroupDeploymentFunctionName;
