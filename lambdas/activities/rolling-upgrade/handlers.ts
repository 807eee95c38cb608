import middy from '@middy/core';
import type { Stage, WorkflowState } from '../../../core/rolling-upgrade/session';
import type { RollingUpgradeDependencies } from './dependencies';
import { runStage, type StageBody } from './stage-runner';
import { bootStep } from './boot-step';
import { cancelSession } from './cancel-session';
import { checkBoot } from './check-boot';
import { checkQuiesce } from './check-quiesce';
import { checkReturnToService } from './check-return-to-service';
import { cleanUp } from './clean-up';
import { evaluateBoot } from './evaluate-boot';
import { openSession, type OpenSessionEvent } from './open-session';
import { startStep } from './start-step';

/**
 * The rolling-upgrade Lambda functions, keyed by the name their ARN has in the workflow
 * (`${<Key>FunctionArn}` in statemachines/rolling-upgrade.asl.json), with the CRUS stage each runs.
 */
export const ROLLING_UPGRADE_STAGE_FUNCTIONS = {
  StartStep: { stage: 'STARTING', body: startStep },
  CheckQuiesce: { stage: 'QUIESCING', body: checkQuiesce },
  BootStep: { stage: 'QUIESCED', body: bootStep },
  CheckBoot: { stage: 'BOOTING', body: checkBoot },
  EvaluateBoot: { stage: 'BOOTED', body: evaluateBoot },
  CheckReturnToService: { stage: 'WLM_WAITING', body: checkReturnToService },
  CancelSession: { stage: 'CANCELLING', body: cancelSession },
  CleanUp: { stage: 'CLEANUP', body: cleanUp },
} as const satisfies Record<string, { stage: Stage; body: StageBody }>;

export type RollingUpgradeFunctionName = 'OpenSession' | keyof typeof ROLLING_UPGRADE_STAGE_FUNCTIONS;
export const ROLLING_UPGRADE_FUNCTION_NAMES: readonly RollingUpgradeFunctionName[] = [
  'OpenSession',
  ...(Object.keys(ROLLING_UPGRADE_STAGE_FUNCTIONS) as (keyof typeof ROLLING_UPGRADE_STAGE_FUNCTIONS)[]),
];

/** A Lambda handler as the embedded engine and the AWS runtime both call it. */
export type LambdaHandler = (event: never, context: unknown) => Promise<WorkflowState>;

/** Builds every rolling-upgrade handler from one set of dependencies (a factory, as activities are built in Temporal). */
export function createRollingUpgradeHandlers(deps: RollingUpgradeDependencies): Record<RollingUpgradeFunctionName, LambdaHandler> {
  const stageHandlers = Object.entries(ROLLING_UPGRADE_STAGE_FUNCTIONS).map(([name, { stage, body }]) => [
    name,
    middy(async (state: WorkflowState) => runStage(stage, state, deps, body)),
  ]);
  return {
    OpenSession: middy(async (event: OpenSessionEvent) => openSession(event, deps)),
    ...Object.fromEntries(stageHandlers),
  } as Record<RollingUpgradeFunctionName, LambdaHandler>;
}
