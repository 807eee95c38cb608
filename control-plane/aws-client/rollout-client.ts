import { randomUUID } from 'node:crypto';
import {
  DescribeExecutionCommand,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
  type ExecutionStatus,
} from '@aws-sdk/client-sfn';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbDeploymentStore } from '../../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbSessionStore } from '../../adapters/dynamodb/dynamodb-session-store';
import type { WorkflowName } from '../../contracts';
import { idForExecution } from '../../core/execution-id';
import type { SiteState } from '../../core/site/site-state';
import { executionRunsSession, SESSION_CONTROL_KEYS } from '../../core/session-control';
import {
  runKindOf,
  type CancelResult,
  type GateResult,
  type RolloutRuntime,
  type RunOutcome,
  type SessionKind,
  type SessionListing,
  type SessionProgress,
  type SessionStatus,
  type SessionView,
  type StartedRun,
  type StopResult,
} from '../runtime';
import type { TaskRunView } from '../reports/task-run-report';
import { DynamoDbTaskRunStore } from '../../adapters/dynamodb/dynamodb-task-run-store';
import type { ControlPlaneEndpoints } from '../endpoints';
import { StoreSessions } from '../store-sessions';
import { refuseResumeWhileRunning } from '../resume-check';
import { wakeThroughSfn } from '../operator-wake';
import { ScheduleClient } from './schedule-client';

/** How a client reaches a control plane's APIs: endpoints (absent on AWS: the SDK's own), region, credentials. */
export interface ClientConnection {
  endpoints: Omit<ControlPlaneEndpoints, 'stepFunctionsEndpoint' | 'dynamodbEndpoint'> & { stepFunctionsEndpoint?: string; dynamodbEndpoint?: string };
  /** A named profile of the shared config (AWS only); the default credential chain without it. */
  profile?: string;
  /** Dummy credentials for a local endpoint (the SDK refuses to sign without any). */
  localCredentials?: boolean;
  /** Real ms between two DescribeExecution polls while following an execution (default 250). */
  pollMs?: number;
  /** Extra cleanup when the client closes (an in-process control plane). */
  onClose?: () => Promise<void>;
  /** The simulated site and its clock, when the control plane runs in this process. */
  local?: { siteState(): SiteState | undefined; now(): number };
}

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

const WORKFLOW_OF: Readonly<Record<SessionKind, WorkflowName>> = { upgrade: 'rollingUpgrade', deployment: 'groupDeployment', tasks: 'taskGraph' };

/**
 * The engine facade over the Step Functions and DynamoDB APIs: run = StartExecution (then
 * DescribeExecution until the chain of continue-as-new executions ends), the reads = the store's
 * DynamoDB reads, cancel = the store's cancel request that the running workflow picks up (the
 * CRUS deletion rules), stop = StopExecution (abort, no cleanup). One code path for an
 * in-process control plane, a `rollout serve`, LocalStack and a deployed stack.
 */
export class RolloutClient implements RolloutRuntime {
  readonly sfn: SFNClient;
  private readonly dynamoDb: DynamoDBClient;
  private readonly reads: StoreSessions;
  private readonly pollMs: number;
  private readonly common: { region: string; profile?: string; credentials?: typeof LOCAL_CREDENTIALS };
  private scheduleClient: ScheduleClient | undefined;
  /** Inputs of executions read by isRunning (an execution's input never changes). */
  private readonly inputs = new Map<string, unknown>();

  constructor(private readonly connection: ClientConnection) {
    const { endpoints } = connection;
    const common = {
      region: endpoints.region,
      ...(connection.profile ? { profile: connection.profile } : {}),
      ...(connection.localCredentials ? { credentials: LOCAL_CREDENTIALS } : {}),
    };
    this.common = common;
    this.sfn = new SFNClient({ ...common, ...(endpoints.stepFunctionsEndpoint ? { endpoint: endpoints.stepFunctionsEndpoint } : {}) });
    this.dynamoDb = new DynamoDBClient({ ...common, ...(endpoints.dynamodbEndpoint ? { endpoint: endpoints.dynamodbEndpoint } : {}) });
    const document = DynamoDBDocumentClient.from(this.dynamoDb, { marshallOptions: { removeUndefinedValues: true } });
    this.reads = new StoreSessions({
      upgrades: new DynamoDbSessionStore({ tableName: endpoints.tableName, client: document }),
      deployments: new DynamoDbDeploymentStore({ tableName: endpoints.tableName, client: document }),
      taskRuns: new DynamoDbTaskRunStore({ tableName: endpoints.tableName, client: document }),
      running: true,
      // approve, resume and cancel wake a workflow parked for its operator: SendTaskSuccess through this client.
      wake: wakeThroughSfn(this.sfn),
    });
    this.pollMs = connection.pollMs ?? 250;
  }

  get endpoints(): ClientConnection['endpoints'] {
    return this.connection.endpoints;
  }

  async run(workflow: WorkflowName, input: unknown, executionName: string = randomUUID()): Promise<StartedRun> {
    const started = await this.sfn.send(
      new StartExecutionCommand({ stateMachineArn: this.stateMachineArn(workflow), name: executionName, input: JSON.stringify(input) }),
    );
    const executionArn = started.executionArn!;
    const outcome = this.follow(executionArn);
    // A caller that never awaits the outcome must not see an unhandled rejection.
    outcome.catch(() => undefined);
    return { workflow, kind: runKindOf(workflow), id: idForExecution(executionArn), executionArn, outcome };
  }

  /**
   * Carries an upgrade, a deployment or a task run on from the store: a new execution with
   * `{resumeUpgradeId}` / `{resumeDeploymentId}` / `{resumeRunId}`, named after the session so that
   * watch and cancel know it is the session's. Refused (SessionStillRunningError, nothing started)
   * while an execution still runs the session: see refuseResumeWhileRunning.
   */
  async resume(kind: SessionKind, id: string): Promise<StartedRun> {
    await refuseResumeWhileRunning(this, kind, id);
    return this.run(WORKFLOW_OF[kind], { [SESSION_CONTROL_KEYS[kind].resume]: id }, `${id}-resume-${Date.now().toString(36)}`);
  }

  /** Whether an execution works on the session now (each running execution's input is read once, when its name does not say). */
  async isRunning(kind: SessionKind, id: string): Promise<boolean> {
    let nextToken: string | undefined;
    do {
      const page = await this.sfn.send(
        new ListExecutionsCommand({ stateMachineArn: this.stateMachineArn(WORKFLOW_OF[kind]), statusFilter: 'RUNNING', ...(nextToken ? { nextToken } : {}) }),
      );
      for (const { executionArn, name } of page.executions ?? []) {
        if (!executionArn) continue;
        if (executionRunsSession(kind, id, { executionArn, name })) return true;
        if (!this.inputs.has(executionArn)) {
          const described = await this.sfn.send(new DescribeExecutionCommand({ executionArn }));
          this.inputs.set(executionArn, described.input === undefined ? undefined : (JSON.parse(described.input) as unknown));
        }
        if (executionRunsSession(kind, id, { executionArn, name }, this.inputs.get(executionArn))) return true;
      }
      nextToken = page.nextToken;
    } while (nextToken);
    return false;
  }

  /** Aborts an execution as StopExecution does on AWS: no cleanup (drained nodes stay drained, locks stay). Not a session's stop (see stop). */
  async abortExecution(executionArn: string, cause?: string): Promise<void> {
    await this.sfn.send(new StopExecutionCommand({ executionArn, ...(cause ? { cause } : {}) }));
  }

  /** The executions of a workflow, newest first (the first page: up to 100). */
  async executions(workflow: WorkflowName, status?: ExecutionStatus) {
    const listed = await this.sfn.send(
      new ListExecutionsCommand({ stateMachineArn: this.stateMachineArn(workflow), ...(status ? { statusFilter: status } : {}) }),
    );
    return listed.executions ?? [];
  }

  /** The outcome of the last execution of the chain `executionArn` starts (continue-as-new: output.continuedAs.executionArn). */
  async follow(executionArn: string): Promise<RunOutcome> {
    let arn = executionArn;
    for (;;) {
      const described = await this.sfn.send(new DescribeExecutionCommand({ executionArn: arn }));
      if (described.status === 'RUNNING' || described.status === 'PENDING_REDRIVE') {
        await new Promise((resolve) => setTimeout(resolve, this.pollMs));
        continue;
      }
      const output = described.output === undefined ? undefined : (JSON.parse(described.output) as unknown);
      const next = (output as { continuedAs?: { executionArn?: unknown } } | undefined)?.continuedAs?.executionArn;
      if (described.status === 'SUCCEEDED' && typeof next === 'string') {
        arn = next;
        continue;
      }
      const status = described.status === 'SUCCEEDED' ? 'SUCCEEDED' : described.status === 'ABORTED' ? 'ABORTED' : 'FAILED';
      return {
        executionArn: arn,
        status,
        ...(output !== undefined ? { output } : {}),
        ...(described.error !== undefined ? { error: described.error } : {}),
        ...(described.cause !== undefined ? { cause: described.cause } : {}),
      };
    }
  }

  /** A control plane from before task graphs (an older stack or serve) has no TaskGraph machine: say so. */
  private stateMachineArn(workflow: WorkflowName): string {
    const arn = this.connection.endpoints.stateMachines[workflow];
    if (!arn) throw new Error(`this control plane has no ${workflow} workflow: update it (rollout serve, or the stack) to a version that has`);
    return arn;
  }

  taskRun(id: string): Promise<TaskRunView | undefined> {
    return this.reads.taskRun(id);
  }

  sessions(): Promise<SessionListing[]> {
    return this.reads.sessions();
  }

  session(id: string): Promise<SessionView | undefined> {
    return this.reads.session(id);
  }

  /** The cancel request; `running` says whether an execution is there to pick it up (else: `rollout session resume`). */
  async cancel(id: string): Promise<CancelResult> {
    const runningBefore = await this.runningBeforeRequest(id);
    const result = await this.reads.cancel(id);
    return { ...result, running: runningBefore || (await this.isRunning(result.kind, id)) };
  }

  /** The stop request; `running` says whether an execution is there to pick it up. */
  async stop(id: string): Promise<StopResult> {
    const runningBefore = await this.runningBeforeRequest(id);
    const result = await this.reads.stop(id);
    // A task run has no session executions to list (it runs as the TaskGraph workflow's own): the stored answer stands.
    return result.kind === 'tasks' ? result : { ...result, running: runningBefore || (await this.isRunning(result.kind, id)) };
  }

  /**
   * Whether an execution works on the session just before a cancel or stop request is written: the
   * execution that picks the request up may end at once (on virtual time, within milliseconds), and
   * it was there to pick it up all the same.
   */
  private async runningBeforeRequest(id: string): Promise<boolean> {
    const status = await this.reads.status(id);
    return status !== undefined && !status.ended && (await this.isRunning(status.kind, id));
  }

  gate(id: string, action: 'pause' | 'unpause' | 'approve'): Promise<GateResult> {
    return this.reads.gate(id, action);
  }

  progress(id: string): Promise<SessionProgress | undefined> {
    return this.reads.progress(id);
  }

  status(id: string): Promise<SessionStatus | undefined> {
    return this.reads.status(id);
  }

  siteState(): SiteState | undefined {
    return this.connection.local?.siteState();
  }

  now(): number {
    return this.connection.local?.now() ?? Date.now();
  }

  /** The control plane's schedules, through `@aws-sdk/client-scheduler` (made on first use). */
  get schedules(): ScheduleClient {
    const { endpoints } = this.connection;
    this.scheduleClient ??= new ScheduleClient(
      new SchedulerClient({ ...this.common, ...(endpoints.schedulerEndpoint ? { endpoint: endpoints.schedulerEndpoint } : {}) }),
      {
        stateMachines: endpoints.stateMachines,
        ...(endpoints.scheduleGroup ? { scheduleGroup: endpoints.scheduleGroup } : {}),
        ...(endpoints.schedulerRoleArn ? { schedulerRoleArn: endpoints.schedulerRoleArn } : {}),
      },
    );
    return this.scheduleClient;
  }

  async close(): Promise<void> {
    this.scheduleClient?.close();
    this.sfn.destroy();
    this.dynamoDb.destroy();
    await this.connection.onClose?.();
  }
}
