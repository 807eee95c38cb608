import { lazyHandlers } from './lazy-handlers';
import type { GroupDeploymentFunctionName } from '../../contracts';
import { createGroupDeploymentHandlers } from '../activities/group-deployment/handlers';
import { loadGroupDeploymentDependencies } from './environment';

/**
 * The deployed group-deployment functions: one bundle, one exported handler per function
 * (the CDK stack points each Lambda at its export).
 */
const handlerFor = lazyHandlers<GroupDeploymentFunctionName>(async () => createGroupDeploymentHandlers(await loadGroupDeploymentDependencies()));

export const StartDeployment = handlerFor('StartDeployment');
export const PickReadyGroups = handlerFor('PickReadyGroups');
export const PlanPhase = handlerFor('PlanPhase');
export const StartBatch = handlerFor('StartBatch');
export const CheckBatch = handlerFor('CheckBatch');
export const EvaluatePhase = handlerFor('EvaluatePhase');
export const FailGroup = handlerFor('FailGroup');
export const FinishDeployment = handlerFor('FinishDeployment');
export const FailDeployment = handlerFor('FailDeployment');
