import type { FunctionName } from './functions';
import { ENVIRONMENT_UPGRADE_FUNCTION_NAMES, ROLLING_UPGRADE_FUNCTION_NAMES, TASK_GRAPH_FUNCTION_NAMES } from './functions';
import { ASL_FILES } from './paths';

/**
 * The state machines, under one name everywhere: the deployed machine is `<stack>-<Name>`, the
 * embedded engine registers `<Name>`, and a parent names a child's ARN as `${<Name>StateMachineArn}`.
 * Per machine: its file, the functions it invokes (it gets, and may invoke, only these) and the
 * children it starts (`startExecution.sync:2`, or `startExecution` for a child it polls). Children come before their parents.
 */
export const STATE_MACHINES = {
  RollingUpgrade: { file: ASL_FILES.rollingUpgrade, functions: ROLLING_UPGRADE_FUNCTION_NAMES, children: [] },
  TaskGraph: { file: ASL_FILES.taskGraph, functions: TASK_GRAPH_FUNCTION_NAMES, children: [] },
  RunNodeBatches: { file: ASL_FILES.runNodeBatches, functions: ['StartBatch', 'CheckBatch'], children: [] },
  DeployGroup: { file: ASL_FILES.deployGroup, functions: ['PlanPhase', 'EvaluatePhase'], children: ['RunNodeBatches', 'TaskGraph'] },
  GroupDeployment: {
    file: ASL_FILES.groupDeployment,
    functions: ['StartDeployment', 'PickReadyGroups', 'FailGroup', 'FinishDeployment', 'FailDeployment'],
    children: ['DeployGroup'],
  },
  EnvironmentUpgrade: { file: ASL_FILES.environmentUpgrade, functions: ENVIRONMENT_UPGRADE_FUNCTION_NAMES, children: ['RollingUpgrade'] },
} as const satisfies Record<string, { file: string; functions: readonly FunctionName[]; children: readonly string[] }>;
export type StateMachineName = keyof typeof STATE_MACHINES;

/** The workflows a user starts, and the machine each one is. */
export const WORKFLOWS = {
  rollingUpgrade: 'RollingUpgrade',
  groupDeployment: 'GroupDeployment',
  taskGraph: 'TaskGraph',
} as const satisfies Record<string, StateMachineName>;
export type WorkflowName = keyof typeof WORKFLOWS;
