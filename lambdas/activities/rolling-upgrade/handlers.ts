import type { Stage, WorkflowState } from '../../../core/rolling-upgrade/session';
import { createActivityHandlers, stringField } from '../middleware';
import type { RollingUpgradeDependencies } from './dependencies';
import { runActivity, type StageIncrement } from './activity-runner';
import { advanceWindow } from './advance-window';
import { PlanCache } from './plan-cache';
import { awaitOperator } from './await-operator';
import { releaseSiteTriggers } from './activity-runner';
import { bootStep } from './boot-step';
import { cancelSession } from './cancel-session';
import { checkBoot } from './check-boot';
import { checkQuiesce } from './check-quiesce';
import { checkReturnToService } from './check-return-to-service';
import { cleanUp } from './clean-up';
import { evaluateBoot } from './evaluate-boot';
import { openSession, upgradeIdFor } from './open-session';
import { startStep } from './start-step';
import { storeNamingSlurmNodes } from './node-names';

/**
 * The stage table: each rolling-upgrade Lambda function, keyed by the name its ARN has in the
 * workflow (`${<Key>FunctionArn}` in statemachines/rolling-upgrade.asl.json), with the CRUS stage
 * it runs an increment of. The workflow's Dispatch Stage is tested against this table.
 */
export const ROLLING_UPGRADE_STAGE_FUNCTIONS = {
  StartStep: { stage: 'STARTING', activity: startStep },
  CheckQuiesce: { stage: 'QUIESCING', activity: checkQuiesce },
  BootStep: { stage: 'QUIESCED', activity: bootStep },
  CheckBoot: { stage: 'BOOTING', activity: checkBoot },
  EvaluateBoot: { stage: 'BOOTED', activity: evaluateBoot },
  CheckReturnToService: { stage: 'WLM_WAITING', activity: checkReturnToService },
  AdvanceWindow: { stage: 'ROLLING', activity: advanceWindow },
  CancelSession: { stage: 'CANCELLING', activity: cancelSession },
  CleanUp: { stage: 'CLEANUP', activity: cleanUp },
} as const satisfies Record<string, { stage: Stage; activity: StageIncrement }>;

export type RollingUpgradeFunctionName = 'OpenSession' | 'AwaitOperator' | 'ReleaseSiteTriggers' | keyof typeof ROLLING_UPGRADE_STAGE_FUNCTIONS;
export const ROLLING_UPGRADE_FUNCTION_NAMES: readonly RollingUpgradeFunctionName[] = [
  'OpenSession',
  'AwaitOperator',
  'ReleaseSiteTriggers',
  ...(Object.keys(ROLLING_UPGRADE_STAGE_FUNCTIONS) as (keyof typeof ROLLING_UPGRADE_STAGE_FUNCTIONS)[]),
];

/** A Lambda handler as the embedded engine and the AWS runtime both call it. */
export type LambdaHandler = (event: never, context: unknown) => Promise<WorkflowState>;

/** Every handler returns the workflow's pointer, but AwaitOperator: its task ends with SendTaskSuccess, not its result. */
export type RollingUpgradeHandlers = Record<Exclude<RollingUpgradeFunctionName, 'AwaitOperator'>, LambdaHandler> & {
  AwaitOperator: (event: never, context: unknown) => Promise<unknown>;
};

/** The session an event is about: the workflow state's `upgradeId`, or for Open Session the one it resumes or creates. */
export function rollingUpgradeIdOf(event: unknown): string | undefined {
  const input = typeof event === 'object' && event !== null ? (event as { input?: unknown }).input : undefined;
  const executionId = stringField(event, 'executionId');
  return stringField(event, 'upgradeId') ?? stringField(input, 'resumeUpgradeId') ?? (executionId !== undefined ? upgradeIdFor(executionId) : undefined);
}

/** Builds every rolling-upgrade handler from one set of dependencies (a factory, as activities are built in Temporal). */
export function createRollingUpgradeHandlers(given: RollingUpgradeDependencies): RollingUpgradeHandlers {
  // One plan cache per set of handlers, i.e. per container: the window's increments read plan names once.
  // A site whose Slurm names nodes otherwise (CSM): every message names both.
  const store = given.site.nodeNames ? storeNamingSlurmNodes(given.store, given.site.nodeNames) : given.store;
  const deps = { ...given, store, planCache: given.planCache ?? new PlanCache(store) };
  const stageActivities = Object.entries(ROLLING_UPGRADE_STAGE_FUNCTIONS).map(([name, { stage, activity }]) => [
    name,
    (state: WorkflowState, stageDeps: RollingUpgradeDependencies) => runActivity(stage, state, stageDeps, activity),
  ]);
  const activities = {
    OpenSession: openSession,
    AwaitOperator: awaitOperator,
    ReleaseSiteTriggers: releaseSiteTriggers,
    ...Object.fromEntries(stageActivities),
  };
  return createActivityHandlers(activities, deps, { idKey: 'upgradeId', idOf: rollingUpgradeIdOf }) as unknown as RollingUpgradeHandlers;
}
