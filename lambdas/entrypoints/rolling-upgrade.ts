import { lazyHandlers } from './lazy-handlers';
import type { RollingUpgradeFunctionName } from '../../contracts';
import { createRollingUpgradeHandlers } from '../activities/rolling-upgrade/handlers';
import { loadRollingUpgradeDependencies } from './environment';

/**
 * The deployed rolling-upgrade functions: one bundle, one exported handler per function (the CDK
 * stack points each Lambda at its export). Typed by the names in contracts/, so a handler table
 * that lacks one does not compile.
 */
const handlerFor = lazyHandlers<RollingUpgradeFunctionName>(async () => createRollingUpgradeHandlers(await loadRollingUpgradeDependencies()));

export const OpenSession = handlerFor('OpenSession');
export const StartStep = handlerFor('StartStep');
export const CheckQuiesce = handlerFor('CheckQuiesce');
export const BootStep = handlerFor('BootStep');
export const CheckBoot = handlerFor('CheckBoot');
export const EvaluateBoot = handlerFor('EvaluateBoot');
export const CheckReturnToService = handlerFor('CheckReturnToService');
export const AdvanceWindow = handlerFor('AdvanceWindow');
export const AwaitOperator = handlerFor('AwaitOperator');
export const CancelSession = handlerFor('CancelSession');
export const CleanUp = handlerFor('CleanUp');
export const ReleaseSiteTriggers = handlerFor('ReleaseSiteTriggers');
