import middy from '@middy/core';
import type { GroupDeploymentDependencies } from './dependencies';
import { evaluatePhase, failGroup } from './evaluate-phase';
import { finishDeployment } from './finish-deployment';
import { pickReadyGroups } from './pick-ready-groups';
import { planPhase } from './plan-phase';
import { checkBatch, startBatch } from './run-batch';
import { startDeployment } from './start-deployment';

type Step = (event: never, deps: GroupDeploymentDependencies) => Promise<unknown>;

/** The group-deployment functions, keyed by the name their ARN has in the workflows (`${<Key>FunctionArn}`). */
const GROUP_DEPLOYMENT_STEPS = {
  StartDeployment: startDeployment,
  PickReadyGroups: pickReadyGroups,
  PlanPhase: planPhase,
  StartBatch: startBatch,
  CheckBatch: checkBatch,
  EvaluatePhase: evaluatePhase,
  FailGroup: failGroup,
  FinishDeployment: finishDeployment,
} satisfies Record<string, Step>;

export type GroupDeploymentFunctionName = keyof typeof GROUP_DEPLOYMENT_STEPS;
export const GROUP_DEPLOYMENT_FUNCTION_NAMES = Object.keys(GROUP_DEPLOYMENT_STEPS) as GroupDeploymentFunctionName[];

export type GroupDeploymentHandler = (event: never, context: unknown) => Promise<unknown>;

/** Builds every group-deployment handler from one set of dependencies. */
export function createGroupDeploymentHandlers(deps: GroupDeploymentDependencies): Record<GroupDeploymentFunctionName, GroupDeploymentHandler> {
  const entries = Object.entries(GROUP_DEPLOYMENT_STEPS).map(([name, step]) => [
    name,
    middy(async (event: never) => (step as Step)(event, deps)),
  ]);
  return Object.fromEntries(entries) as Record<GroupDeploymentFunctionName, GroupDeploymentHandler>;
}
