import { WORKFLOWS, type StateMachineName } from '../contracts';
import { isGoneToken } from '../control-plane/operator-wake';
import type { ExecutionMachine, ExecutionStatus, ExecutionSummary, Executions } from '../ports/executions';
import { localExecutionArn, type ExecutionOutcome, type ExecutionRecord, type LocalStepFunctions } from './local-step-functions';
import { TaskTokenError } from './task-tokens';

/** The machine each execution kind is, by its contracts name. */
const MACHINE_NAMES: Readonly<Record<ExecutionMachine, StateMachineName>> = { ...WORKFLOWS, environmentUpgrade: 'EnvironmentUpgrade' };

/**
 * The workflows' executions on the local engine in this process (the embedded control plane), as the
 * Step Functions API answers them: what `rollout serve` serves to other processes, called in process.
 * An ended execution carries the engine's figures.
 */
export class LocalExecutions implements Executions<ExecutionOutcome> {
  constructor(
    private readonly engine: LocalStepFunctions,
    private readonly stateMachineArns: Readonly<Record<StateMachineName, string>>,
  ) {}

  start(machine: ExecutionMachine, input: unknown, name: string): Promise<{ executionArn: string }> {
    const started = this.engine.start(this.arnOf(machine), input, name);
    // Awaited through ended(); a caller that never waits must not see an unhandled rejection.
    started.outcome.catch(() => undefined);
    return Promise.resolve({ executionArn: started.executionArn });
  }

  describe(executionArn: string): Promise<(ExecutionSummary & { input?: unknown }) | undefined> {
    const record = this.engine.execution(executionArn);
    return Promise.resolve(record && { ...summary(record), input: record.input });
  }

  list(machine: ExecutionMachine, status?: ExecutionStatus): Promise<ExecutionSummary[]> {
    const records = this.engine.listExecutions(this.arnOf(machine)).filter((record) => status === undefined || record.status === status);
    return Promise.resolve(records.map(summary));
  }

  ended(executionArn: string): Promise<ExecutionOutcome> {
    const outcome = this.engine.outcome(executionArn);
    return outcome ?? Promise.reject(new Error(`Execution Does Not Exist: '${executionArn}'`));
  }

  async stop(executionArn: string, cause?: string): Promise<void> {
    await this.engine.stop(executionArn, undefined, cause);
  }

  sendTaskSuccess(taskToken: string, output: string): Promise<boolean> {
    return delivered(() => this.engine.tokens.succeed(taskToken, output));
  }

  sendTaskFailure(taskToken: string, error: string, cause?: string): Promise<boolean> {
    return delivered(() => this.engine.tokens.fail(taskToken, error, cause));
  }

  executionArn(machine: ExecutionMachine, name: string): string {
    return localExecutionArn(this.arnOf(machine), name);
  }

  close(): void {}

  private arnOf(machine: ExecutionMachine): string {
    return this.stateMachineArns[MACHINE_NAMES[machine]];
  }
}

function summary(record: ExecutionRecord): ExecutionSummary {
  return {
    executionArn: record.executionArn,
    name: record.name,
    status: record.status,
    startDate: new Date(record.startDate),
    ...(record.stopDate !== undefined ? { stopDate: new Date(record.stopDate) } : {}),
  };
}

/** As SendTaskSuccess answers on AWS: a token no task waits on any more is no error. */
function delivered(send: () => void): Promise<boolean> {
  try {
    send();
    return Promise.resolve(true);
  } catch (err) {
    if (err instanceof TaskTokenError && isGoneToken(err.code)) return Promise.resolve(false);
    return Promise.reject(err);
  }
}
