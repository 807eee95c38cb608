import type { GroupDeploymentFunctionName } from '../../../contracts';
import { idForExecution } from '../../../core/execution-id';
import { createActivityHandlers, stringField, type ActivityHandler, type WorkflowActivity } from '../middleware';
import type { GroupDeploymentDependencies } from './dependencies';
import { evaluatePhase, failGroup } from './evaluate-phase';
import { failDeployment } from './fail-deployment';
import { finishDeployment } from './finish-deployment';
import { pickReadyGroups } from './pick-ready-groups';
import { planPhase } from './plan-phase';
import { checkBatch, startBatch } from './run-batch';
import { startDeployment } from './start-deployment';

/** The group-deployment functions, keyed by their names in contracts/ (`${<Key>FunctionArn}` in the workflows): one missing is a compile error. */
const GROUP_DEPLOYMENT_ACTIVITIES = {
  StartDeployment: startDeployment,
  PickReadyGroups: pickReadyGroups,
  PlanPhase: planPhase,
  StartBatch: startBatch,
  CheckBatch: checkBatch,
  EvaluatePhase: evaluatePhase,
  FailGroup: failGroup,
  FinishDeployment: finishDeployment,
  FailDeployment: failDeployment,
} satisfies Record<GroupDeploymentFunctionName, WorkflowActivity<GroupDeploymentDependencies>>;

export type GroupDeploymentHandler = ActivityHandler;

/** The deployment an event is about: its `deploymentId`, or for Start Deployment the one it creates. */
export function deploymentIdOf(event: unknown): string | undefined {
  const executionId = stringField(event, 'executionId');
  return stringField(event, 'deploymentId') ?? (executionId !== undefined ? idForExecution(executionId) : undefined);
}

/** Builds every group-deployment handler from one set of dependencies. */
export function createGroupDeploymentHandlers(deps: GroupDeploymentDependencies): Record<GroupDeploymentFunctionName, GroupDeploymentHandler> {
  return createActivityHandlers(GROUP_DEPLOYMENT_ACTIVITIES, deps, { idKey: 'deploymentId', idOf: deploymentIdOf });
}
