import { randomUUID } from 'node:crypto';
import { upgradeIdFor } from '../lambdas/activities/rolling-upgrade/open-session';
import type { EmbeddedRuntime } from './embedded-runtime';
import type { ExecutionOutcome } from './local-step-functions';

export interface RollingUpgradeRun {
  /** The session id, known as soon as the execution starts (derived from its ARN, as Open Session does). */
  upgradeId: string;
  executionArn: string;
  /** The last execution of the chain (continue-as-new followed). */
  outcome: Promise<ExecutionOutcome>;
}

/** Starts a rolling-upgrade execution on the embedded engine with `input` exactly as it would be given to the console. */
export function startRollingUpgrade(runtime: EmbeddedRuntime, input: unknown, executionName: string = randomUUID()): RollingUpgradeRun {
  const started = runtime.engine.start(runtime.rollingUpgradeArn, input, executionName);
  return {
    upgradeId: upgradeIdFor(started.executionArn),
    executionArn: started.executionArn,
    outcome: runtime.engine.follow(started.outcome),
  };
}
