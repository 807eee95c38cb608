import { Duration } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ENVIRONMENT_UPGRADE_FUNCTION_NAMES, PROJECT_PATHS, type EnvironmentUpgradeFunctionName } from '../../contracts';
import { WorkflowFunctions, type WorkflowFunctionsProps } from './workflow-functions';

/**
 * Lambda timeouts, equal to the TimeoutSeconds of the Task that invokes each function in
 * statemachines/environment-upgrade.asl.json.
 */
export const ENVIRONMENT_UPGRADE_TIMEOUTS: Readonly<Record<EnvironmentUpgradeFunctionName, Duration>> = {
  OpenEnvironmentUpgrade: Duration.minutes(2),
  CloneSeed: Duration.minutes(5),
  AssignControllers: Duration.minutes(5),
  PrepareRollingUpgrade: Duration.minutes(5),
  FollowRollingUpgrade: Duration.minutes(5),
  FailEnvironmentUpgrade: Duration.minutes(1),
};

/** The site connection (`environment`, `policies`), the table, logging and network; the entry and timeouts are fixed here. */
export type EnvironmentUpgradeFunctionsProps = Omit<WorkflowFunctionsProps<string>, 'entry' | 'timeouts'>;

/** One Lambda per environment-upgrade function, from lambdas/entrypoints/environment-upgrade.ts. */
export class EnvironmentUpgradeFunctions extends WorkflowFunctions<EnvironmentUpgradeFunctionName> {
  constructor(scope: Construct, id: string, props: EnvironmentUpgradeFunctionsProps) {
    const timeouts = Object.fromEntries(ENVIRONMENT_UPGRADE_FUNCTION_NAMES.map((name) => [name, ENVIRONMENT_UPGRADE_TIMEOUTS[name]])) as Record<
      EnvironmentUpgradeFunctionName,
      Duration
    >;
    super(scope, id, { ...props, entry: PROJECT_PATHS.environmentUpgradeEntry, timeouts });
  }
}
