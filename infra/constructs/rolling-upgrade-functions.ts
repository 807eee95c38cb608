import { Duration } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { PROJECT_PATHS, ROLLING_UPGRADE_FUNCTION_NAMES, type RollingUpgradeFunctionName } from '../../contracts';
import { WorkflowFunctions, type WorkflowFunctionsProps } from './workflow-functions';

/**
 * Lambda timeouts, equal to the TimeoutSeconds of the Task that invokes each function in
 * statemachines/rolling-upgrade.asl.json: a longer Lambda would outlive its Task, a shorter one
 * would be cut off before the workflow gives up on it. AwaitOperator's Task is a callback
 * (`.waitForTaskToken`) whose TimeoutSeconds is the operator's wait: the function only stores the token.
 */
export const OPEN_SESSION_TIMEOUT = Duration.minutes(2);
export const STAGE_TIMEOUT = Duration.minutes(15);
export const AWAIT_OPERATOR_TIMEOUT = Duration.minutes(2);

/** The site connection (`environment`, `policies`), the table, logging and network; the entry and timeouts are fixed here. */
export type RollingUpgradeFunctionsProps = Omit<WorkflowFunctionsProps<string>, 'entry' | 'timeouts'>;

/** One Lambda per rolling-upgrade function, from lambdas/entrypoints/rolling-upgrade.ts. */
export class RollingUpgradeFunctions extends WorkflowFunctions<RollingUpgradeFunctionName> {
  constructor(scope: Construct, id: string, props: RollingUpgradeFunctionsProps) {
    const timeouts = Object.fromEntries(
      ROLLING_UPGRADE_FUNCTION_NAMES.map((name) => [
        name,
        name === 'OpenSession' ? OPEN_SESSION_TIMEOUT : name === 'AwaitOperator' ? AWAIT_OPERATOR_TIMEOUT : STAGE_TIMEOUT,
      ]),
    ) as Record<RollingUpgradeFunctionName, Duration>;
    super(scope, id, { ...props, entry: PROJECT_PATHS.rollingUpgradeEntry, timeouts });
  }
}
