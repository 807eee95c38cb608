import type { EnvironmentUpgradeFunctionName } from '../../../contracts';
import type { EnvironmentUpgradePointer } from '../../../core/environments';
import { createActivityLogger, stringField, withActivityMiddleware } from '../middleware';
import type { EnvironmentUpgradeDependencies } from './dependencies';
import { failEnvironmentUpgrade, type FailEnvironmentUpgradeEvent } from './fail-environment-upgrade';
import { openEnvironmentUpgrade, type OpenEnvironmentUpgradeEvent } from './open-environment-upgrade';
import { runPhase } from './phase-runner';
import { followRollingUpgrade, prepareRollingUpgrade } from './rolling-upgrades';
import { assignControllers, cloneSeed } from './seed-phases';
import { idForExecution } from '../../../core/execution-id';

/** A handler as the embedded engine and the AWS runtime both call it. */
export type EnvironmentUpgradeHandler = (event: never, context: unknown) => Promise<EnvironmentUpgradePointer>;

/** The session an event is about, for the log lines. */
function upgradeIdOf(event: unknown): string | undefined {
  const nested = (key: string) => (typeof event === 'object' && event !== null ? (event as Record<string, unknown>)[key] : undefined);
  const executionId = stringField(event, 'executionId');
  return (
    stringField(event, 'upgradeId') ??
    stringField(nested('state'), 'upgradeId') ??
    stringField(nested('input'), 'resumeUpgradeId') ??
    (executionId !== undefined ? idForExecution(executionId) : undefined)
  );
}

/** Builds every environment-upgrade handler from one set of dependencies. */
export function createEnvironmentUpgradeHandlers(deps: EnvironmentUpgradeDependencies): Record<EnvironmentUpgradeFunctionName, EnvironmentUpgradeHandler> {
  const logger = deps.logger ?? createActivityLogger();
  const logging = (activity: string) => ({ logger, activity, idKey: 'upgradeId', idOf: upgradeIdOf });
  const handler = <E>(name: EnvironmentUpgradeFunctionName, body: (event: E) => Promise<EnvironmentUpgradePointer>) => withActivityMiddleware(body, logging(name)) as unknown as EnvironmentUpgradeHandler;
  return {
    OpenEnvironmentUpgrade: handler('OpenEnvironmentUpgrade', (event: OpenEnvironmentUpgradeEvent) => openEnvironmentUpgrade(event, deps)),
    CloneSeed: handler('CloneSeed', (pointer: EnvironmentUpgradePointer) => runPhase('CLONING', pointer, deps, cloneSeed)),
    AssignControllers: handler('AssignControllers', (pointer: EnvironmentUpgradePointer) => runPhase('ASSIGNING', pointer, deps, assignControllers)),
    PrepareRollingUpgrade: handler('PrepareRollingUpgrade', (event: EnvironmentUpgradePointer & { rollingUpgradeStateMachineArn: string }) =>
      runPhase(event.phase, event, deps, prepareRollingUpgrade(event.rollingUpgradeStateMachineArn)),
    ),
    FollowRollingUpgrade: handler('FollowRollingUpgrade', (pointer: EnvironmentUpgradePointer) => runPhase(pointer.phase, pointer, deps, followRollingUpgrade)),
    FailEnvironmentUpgrade: handler('FailEnvironmentUpgrade', (event: FailEnvironmentUpgradeEvent) => failEnvironmentUpgrade(event, deps)),
  };
}
