import { lazyHandlers } from './lazy-handlers';
import type { EnvironmentUpgradeFunctionName } from '../../contracts';
import { createEnvironmentUpgradeHandlers } from '../activities/environment-upgrade/handlers';
import { loadEnvironmentUpgradeDependencies } from './environment';

/**
 * The deployed environment-upgrade functions: one bundle, one exported handler per function (the
 * CDK stack points each Lambda at its export).
 */
const handlerFor = lazyHandlers<EnvironmentUpgradeFunctionName>(async () => createEnvironmentUpgradeHandlers(await loadEnvironmentUpgradeDependencies()));

export const OpenEnvironmentUpgrade = handlerFor('OpenEnvironmentUpgrade');
export const CloneSeed = handlerFor('CloneSeed');
export const AssignControllers = handlerFor('AssignControllers');
export const PrepareRollingUpgrade = handlerFor('PrepareRollingUpgrade');
export const FollowRollingUpgrade = handlerFor('FollowRollingUpgrade');
export const FailEnvironmentUpgrade = handlerFor('FailEnvironmentUpgrade');
