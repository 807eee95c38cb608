import type { WorkflowName } from '../contracts';

/** The state machines a control plane starts: the workflows a user starts, and the side-by-side environment upgrade. */
export type ExecutionMachine = WorkflowName | 'environmentUpgrade';

/** An execution's status, as Step Functions names it. */
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'PENDING_REDRIVE';

/** One execution as ListExecutions lists it. */
export interface ExecutionSummary {
  executionArn: string;
  name: string;
  status: ExecutionStatus;
  startDate?: Date;
  stopDate?: Date;
}

/** How one execution (not the chain it continues as) ended. */
export interface ExecutionEnd {
  executionArn: string;
  status: 'SUCCEEDED' | 'FAILED' | 'ABORTED';
  output?: unknown;
  /** The Fail state's Error: a typed error's name (InvalidInputError, CriticalGroupFailed, ...). */
  error?: string;
  cause?: string;
}

/**
 * The executions of the workflows: the one thing that differs between the control plane on AWS (the
 * Step Functions API, through the SDK: control-plane/aws-client/sfn-executions.ts) and the embedded one
 * (the local engine in this process: local/local-executions.ts). Everything a control plane does over
 * them (following a continue-as-new chain, whether a run is running, a resume's check) is written once,
 * in control-plane/control-plane.ts. `End` is what an ended execution carries (the local engine adds its figures).
 */
export interface Executions<End extends ExecutionEnd = ExecutionEnd> {
  /** StartExecution of `machine` under `name`. */
  start(machine: ExecutionMachine, input: unknown, name: string): Promise<{ executionArn: string }>;
  /** DescribeExecution: its status and input; undefined for an execution this control plane does not know. */
  describe(executionArn: string): Promise<(ExecutionSummary & { input?: unknown }) | undefined>;
  /** ListExecutions of `machine`, newest first, every page; only those in `status` if given. */
  list(machine: ExecutionMachine, status?: ExecutionStatus): Promise<ExecutionSummary[]>;
  /** Resolves once the execution has ended (not the executions it continued as). */
  ended(executionArn: string): Promise<End>;
  /** StopExecution: aborts it, no cleanup. */
  stop(executionArn: string, cause?: string): Promise<void>;
  /** SendTaskSuccess; false when no task waits on the token any more (used, timed out, ended): no error. */
  sendTaskSuccess(taskToken: string, output: string): Promise<boolean>;
  /** SendTaskFailure; false when no task waits on the token any more. */
  sendTaskFailure(taskToken: string, error: string, cause?: string): Promise<boolean>;
  /** The ARN the execution of `machine` named `name` has (or will have): what a run's id derives from. */
  executionArn(machine: ExecutionMachine, name: string): string;
  /** Releases what the executions were reached through (an SDK client). */
  close(): void;
}
