import type { EnvironmentUpgradeFunctionName } from '../../../contracts';
import type { EnvironmentUpgradePointer } from '../../../core/environments';
import { createActivityHandlers, stringField, type WorkflowActivity } from '../middleware';
import type { EnvironmentUpgradeDependencies } from './dependencies';
import { failEnvironmentUpgrade } from './fail-environment-upgrade';
import { openEnvironmentUpgrade } from './open-environment-upgrade';
import { runPhase } from './phase-runner';
import { followRollingUpgrade, prepareRollingUpgrade } from './rolling-upgrades';
import { assignControllers, cloneSeed } from './seed-phases';
import { idForExecution } from '../../../core/execution-id';

/** A handler as the embedded engine and the AWS runtime both call it. */
export type EnvironmentUpgradeHandler = (event: never, context: unknown) => Promise<EnvironmentUpgradePointer>;

/** The session an event is about, for the log lines. */
export function environmentUpgradeIdOf(event: unknown): string | undefined {
  const nested = (key: string) => (typeof event === 'object' && event !== null ? (event as Record<string, unknown>)[key] : undefined);
  const executionId = stringField(event, 'executionId');
  return (
    stringField(event, 'upgradeId') ??
    stringField(nested('state'), 'upgradeId') ??
    stringField(nested('input'), 'resumeUpgradeId') ??
    (executionId !== undefined ? idForExecution(executionId) : undefined)
  );
}

/** The environment-upgrade functions, keyed by their names in contracts/: one missing is a compile error. */
const ENVIRONMENT_UPGRADE_ACTIVITIES = {
  OpenEnvironmentUpgrade: openEnvironmentUpgrade,
  CloneSeed: (pointer: EnvironmentUpgradePointer, deps: EnvironmentUpgradeDependencies) => runPhase('CLONING', pointer, deps, cloneSeed),
  AssignControllers: (pointer: EnvironmentUpgradePointer, deps: EnvironmentUpgradeDependencies) => runPhase('ASSIGNING', pointer, deps, assignControllers),
  PrepareRollingUpgrade: (event: EnvironmentUpgradePointer & { rollingUpgradeStateMachineArn: string }, deps: EnvironmentUpgradeDependencies) =>
    runPhase(event.phase, event, deps, prepareRollingUpgrade(event.rollingUpgradeStateMachineArn)),
  FollowRollingUpgrade: (pointer: EnvironmentUpgradePointer, deps: EnvironmentUpgradeDependencies) =>
    runPhase(pointer.phase, pointer, deps, followRollingUpgrade),
  FailEnvironmentUpgrade: failEnvironmentUpgrade,
} satisfies Record<EnvironmentUpgradeFunctionName, WorkflowActivity<EnvironmentUpgradeDependencies>>;

/** Builds every environment-upgrade handler from one set of dependencies. */
export function createEnvironmentUpgradeHandlers(deps: EnvironmentUpgradeDependencies): Record<EnvironmentUpgradeFunctionName, EnvironmentUpgradeHandler> {
  return createActivityHandlers(ENVIRONMENT_UPGRADE_ACTIVITIES, deps, { idKey: 'upgradeId', idOf: environmentUpgradeIdOf });
}
