import {
  DescribeExecutionCommand,
  ListExecutionsCommand,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StopExecutionCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import { executionArnOf } from '../../core/environments';
import type { ExecutionEnd, ExecutionMachine, ExecutionStatus, ExecutionSummary, Executions } from '../../ports/executions';
import { isGoneToken } from '../operator-wake';

export interface SfnExecutionsOptions {
  sfn: SFNClient;
  /** The ARN of each state machine this control plane has; a machine absent is one it lacks (an older stack or serve). */
  stateMachines: Partial<Record<ExecutionMachine, string>>;
  /** Real ms between two DescribeExecution polls while waiting for an execution to end (default 250). */
  pollMs?: number;
  /** Whether closing destroys the client (default: it was made for these executions). */
  ownsClient?: boolean;
}

/**
 * The workflows' executions through `@aws-sdk/client-sfn`: AWS, LocalStack, a `rollout serve`, or the
 * Step Functions endpoint of the process that owns a data directory.
 */
export class SfnExecutions implements Executions {
  private readonly sfn: SFNClient;
  private readonly stateMachines: Partial<Record<ExecutionMachine, string>>;
  private readonly pollMs: number;
  private readonly ownsClient: boolean;

  constructor(options: SfnExecutionsOptions) {
    this.sfn = options.sfn;
    this.stateMachines = options.stateMachines;
    this.pollMs = options.pollMs ?? 250;
    this.ownsClient = options.ownsClient ?? true;
  }

  async start(machine: ExecutionMachine, input: unknown, name: string): Promise<{ executionArn: string }> {
    const started = await this.sfn.send(new StartExecutionCommand({ stateMachineArn: this.stateMachineArn(machine), name, input: JSON.stringify(input) }));
    if (!started.executionArn) throw new Error('StartExecution answered without an executionArn');
    return { executionArn: started.executionArn };
  }

  async describe(executionArn: string): Promise<(ExecutionSummary & { input?: unknown }) | undefined> {
    try {
      const described = await this.sfn.send(new DescribeExecutionCommand({ executionArn }));
      return {
        executionArn,
        name: described.name ?? '',
        status: described.status as ExecutionStatus,
        ...(described.input === undefined ? {} : { input: JSON.parse(described.input) as unknown }),
      };
    } catch (err) {
      if (err instanceof Error && err.name === 'ExecutionDoesNotExist') return undefined;
      throw err;
    }
  }

  async list(machine: ExecutionMachine, status?: ExecutionStatus): Promise<ExecutionSummary[]> {
    const listed: ExecutionSummary[] = [];
    let nextToken: string | undefined;
    do {
      const page = await this.sfn.send(
        new ListExecutionsCommand({
          stateMachineArn: this.stateMachineArn(machine),
          ...(status ? { statusFilter: status } : {}),
          ...(nextToken ? { nextToken } : {}),
        }),
      );
      for (const execution of page.executions ?? []) {
        if (!execution.executionArn) continue;
        listed.push({
          executionArn: execution.executionArn,
          name: execution.name ?? '',
          status: execution.status as ExecutionStatus,
          ...(execution.startDate ? { startDate: execution.startDate } : {}),
          ...(execution.stopDate ? { stopDate: execution.stopDate } : {}),
        });
      }
      nextToken = page.nextToken;
    } while (nextToken);
    return listed;
  }

  /** DescribeExecution until it has ended. */
  async ended(executionArn: string): Promise<ExecutionEnd> {
    for (;;) {
      const described = await this.sfn.send(new DescribeExecutionCommand({ executionArn }));
      if (described.status === 'RUNNING' || described.status === 'PENDING_REDRIVE') {
        await new Promise((resolve) => setTimeout(resolve, this.pollMs));
        continue;
      }
      const output = described.output === undefined ? undefined : (JSON.parse(described.output) as unknown);
      const status = described.status === 'SUCCEEDED' ? 'SUCCEEDED' : described.status === 'ABORTED' ? 'ABORTED' : 'FAILED';
      return {
        executionArn,
        status,
        ...(output !== undefined ? { output } : {}),
        ...(described.error !== undefined ? { error: described.error } : {}),
        ...(described.cause !== undefined ? { cause: described.cause } : {}),
      };
    }
  }

  async stop(executionArn: string, cause?: string): Promise<void> {
    await this.sfn.send(new StopExecutionCommand({ executionArn, ...(cause ? { cause } : {}) }));
  }

  sendTaskSuccess(taskToken: string, output: string): Promise<boolean> {
    return this.delivered(this.sfn.send(new SendTaskSuccessCommand({ taskToken, output })));
  }

  sendTaskFailure(taskToken: string, error: string, cause?: string): Promise<boolean> {
    return this.delivered(this.sfn.send(new SendTaskFailureCommand({ taskToken, error, ...(cause ? { cause } : {}) })));
  }

  executionArn(machine: ExecutionMachine, name: string): string {
    return executionArnOf(this.stateMachineArn(machine), name);
  }

  close(): void {
    if (this.ownsClient) this.sfn.destroy();
  }

  /** A token no task waits on any more is no error: that execution is not waiting any more. */
  private async delivered(sent: Promise<unknown>): Promise<boolean> {
    try {
      await sent;
      return true;
    } catch (err) {
      if (err instanceof Error && isGoneToken(err.name)) return false;
      throw err;
    }
  }

  /** A control plane from before task graphs (an older stack or serve) has no TaskGraph machine: say so. */
  private stateMachineArn(machine: ExecutionMachine): string {
    const arn = this.stateMachines[machine];
    if (!arn) throw new Error(`this control plane has no ${machine} workflow: update it (rollout serve, or the stack) to a version that has`);
    return arn;
  }
}
