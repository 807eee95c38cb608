import { randomUUID } from 'node:crypto';
import { idForExecution } from '../core/execution-id';
import type { EmbeddedRuntime } from './embedded-runtime';
import type { ExecutionOutcome } from './local-step-functions';

export interface GroupDeploymentRun {
  /** Known as soon as the execution starts (derived from its ARN, as Start Deployment does). */
  deploymentId: string;
  executionArn: string;
  outcome: Promise<ExecutionOutcome>;
}

/** Starts a group-deployment execution on the embedded engine with `input` as the console would take it. */
export function startGroupDeployment(runtime: EmbeddedRuntime, input: unknown, executionName: string = randomUUID()): GroupDeploymentRun {
  const started = runtime.engine.start(runtime.groupDeploymentArn, input, executionName);
  return { deploymentId: idForExecution(started.executionArn), executionArn: started.executionArn, outcome: started.outcome };
}
