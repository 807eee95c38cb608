import type { WorkflowName } from '../contracts';
import type { DeploymentStage } from '../core/group-deployment';
import type { SessionState, Stage, UpgradeSession } from '../core/rolling-upgrade/session';
import type { DeploymentRecord, DeploymentStatus } from '../ports/deployment-store';
import type { SiteState } from '../core/site/site-state';
import type { DeploymentReport } from './reports/deployment-report';
import type { SessionReport } from './reports/session-report';
import type { TaskRunView } from './reports/task-run-report';
import type { OperationState } from '../core/scheduling';
import type { TaskRunRecord, TaskRunStatus } from '../ports/task-run-store';

export type { WorkflowName } from '../contracts';

/**
 * The engine facade: what the CLI (and `rollout serve`, and the tests) ask of a control plane.
 * The embedded runtime (EmbeddedRuntime; StoreSessions for a process that only reads a data
 * directory) and the client of the Step Functions and DynamoDB APIs (control-plane/aws-client/rollout-client.ts:
 * the embedded control plane served in-process, a `rollout serve`, a deployed stack) implement
 * them: run = StartExecution, the reads = the store's DynamoDB reads, cancel = the store's cancel
 * request that the workflow picks up.
 */
export interface RolloutSessions {
  /** Upgrades, deployments and task runs (standalone: a group's deploy phase is its deployment's), newest first. */
  sessions(): Promise<SessionListing[]>;
  /** One session's report, or undefined for an id no upgrade, deployment or task run has. */
  session(id: string): Promise<SessionView | undefined>;
  /**
   * Cancel an upgrade the CRUS way (UPDATING -> DELETING, and the workflow applies the deletion
   * rules), a deployment (RUNNING -> CANCELLING: no group or batch starts after it, actions in
   * flight finish, it ends CANCELLED) or a task run (RUNNING -> CANCELLING: no task starts after it,
   * tasks in flight finish, its own drains are lifted, it ends CANCELLED). Throws SessionNotFoundError,
   * DeploymentNotFoundError or SessionNotCancellableError.
   */
  cancel(id: string): Promise<CancelResult>;
  /**
   * Stop an upgrade, a deployment or a task run (UPDATING -> STOPPING, RUNNING -> STOPPING): what is in flight
   * finishes, nothing new starts, what was not started is left as it was, and it ends STOPPED, to be
   * carried on by a resume. Throws SessionNotFoundError, DeploymentNotFoundError or SessionNotStoppableError.
   */
  stop(id: string): Promise<StopResult>;
  /**
   * Mode window, the operator's gate kept on the session: `pause` stops new nodes from starting
   * (nodes in flight finish), `unpause` lifts it, `approve` lets the batch waited for start. The
   * running workflow reads it on its next increment. Throws SessionNotFoundError or SessionGateError.
   */
  gate(id: string, action: 'pause' | 'unpause' | 'approve'): Promise<GateResult>;
  /** A cheap progress read for a display polling every quarter second; undefined until the session exists. */
  progress(id: string): Promise<SessionProgress | undefined>;
  /** Its state from its one item, and whether it has ended (READY, DELETED, HALTED; SUCCEEDED, FAILED, CANCELLED). */
  status(id: string): Promise<SessionStatus | undefined>;
  /**
   * Whether an execution works on the session now: a session that has not ended and that nothing
   * runs (stopped, its process died) waits for `rollout session resume`. A data directory can only
   * tell whether a live process that runs workflows owns it.
   */
  isRunning(kind: SessionKind, id: string): Promise<boolean>;
  /** A task run's report (each node's task states, why each blocked task is blocked); undefined for an id no run has. */
  taskRun(id: string): Promise<TaskRunView | undefined>;
  close(): Promise<void>;
}

export interface RolloutRuntime extends RolloutSessions {
  /** Starts a workflow with `input` exactly as the console would take it. */
  run(workflow: WorkflowName, input: unknown): Promise<StartedRun>;
  /** The simulated site's state; undefined for a real site. */
  siteState(): SiteState | undefined;
  /** The site's clock in ms (simulated time on a simulated site). */
  now(): number;
}

/** What a started workflow makes, each a session: an upgrade, a deployment, or a task run. */
export type SessionKind = 'upgrade' | 'deployment' | 'tasks';
export type RunKind = SessionKind;

/** The kind of record a workflow makes, as its first activity names it. */
export function runKindOf(workflow: WorkflowName): RunKind {
  return workflow === 'rollingUpgrade' ? 'upgrade' : workflow === 'groupDeployment' ? 'deployment' : 'tasks';
}

export interface GateResult {
  id: string;
  action: 'pause' | 'unpause' | 'approve';
  /** approve: the batch approved, 1-based as the CLI and the messages count them. */
  batch?: number;
  /** Whether a process that runs workflows holds the session (else the gate applies when it is resumed). */
  running: boolean;
  /** The gate is stored, but the parked workflow could not be woken (the same command sends its token again): why. */
  wakeError?: string;
}

/** How an execution (the last of its continue-as-new chain) ended. */
export interface RunOutcome {
  executionArn: string;
  status: 'SUCCEEDED' | 'FAILED' | 'ABORTED';
  output?: unknown;
  /** The Fail state's Error: a typed error's name (InvalidInputError, CriticalGroupFailed, ...). */
  error?: string;
  cause?: string;
}

export interface StartedRun<Outcome extends RunOutcome = RunOutcome> {
  workflow: WorkflowName;
  kind: RunKind;
  /** The upgrade, deployment or task-run id, known as soon as the execution starts (derived from its ARN, as the first activity does). */
  id: string;
  executionArn: string;
  /** The outcome of the last execution of the chain (continue-as-new followed). */
  outcome: Promise<Outcome>;
}

export type SessionListing =
  | { kind: 'upgrade'; id: string; createdAt: string; session: UpgradeSession }
  | { kind: 'deployment'; id: string; createdAt: string; deployment: DeploymentRecord }
  | { kind: 'tasks'; id: string; createdAt: string; taskRun: TaskRunRecord };

export type SessionView =
  | { kind: 'upgrade'; report: SessionReport }
  | { kind: 'deployment'; report: DeploymentReport }
  | { kind: 'tasks'; report: TaskRunView & { messages: string[] } };

/** A run's kind and its state in that kind's own terms. */
export type RunState = { kind: 'upgrade'; state: SessionState } | { kind: 'deployment'; state: DeploymentStatus } | { kind: 'tasks'; state: TaskRunStatus };

export type CancelResult = RunState & {
  id: string;
  /** Whether an execution (a process that runs workflows) works on the session now: if not, the cancel applies when it is resumed. */
  running: boolean;
  /** The cancel is stored, but a workflow parked for its operator could not be woken: why. */
  wakeError?: string;
};

export type StopResult = RunState & {
  id: string;
  /** Whether an execution works on the session now: if not, nothing is in flight; a resume withdraws the stop and carries the run on. */
  running: boolean;
  /** The stop is stored, but a workflow parked for its operator could not be woken: why. */
  wakeError?: string;
};

export type SessionStatus = RunState & { ended: boolean };

export type SessionProgress =
  | {
      kind: 'upgrade';
      step: number;
      steps: number;
      stage: Stage;
      total: number;
      upgraded: number;
      failed: number;
      /**
       * Mode window: nodes holding a slot (counted against maxUnavailable: `cap`), drained ahead without
       * one, those draining, in flight by phase, and why none starts (approval, halted, ...).
       */
      window?: { inFlight: number; cap: number; ahead: number; draining: number; phases: Record<string, number>; waiting?: string; halted?: string };
      /** The session's state (STOPPING, ...). */
      state: SessionState;
      /** When it should end at the pace so far (epoch ms, the session's clock), and whether that clock is simulated. */
      estimate?: { endsAt: number; basis: string };
      simulatedTime?: boolean;
      /** The session's newest message (e.g. that a group it needs does not exist). */
      message?: string;
    }
  | { kind: 'deployment'; status: DeploymentStatus; groups: Record<DeploymentStage, number>; nodes: Record<DeploymentStage, number> }
  | { kind: 'tasks'; status: TaskRunStatus; counts: Record<OperationState, number>; nodeCount: number; message?: string };

/**
 * What the API needs of a control plane: the engine facade's run and its session reads and cancel.
 * The embedded runtime is one; the deployed Lambda builds one over Step Functions and the table.
 */
export interface ApiControlPlane extends Pick<RolloutSessions, 'sessions' | 'session' | 'cancel' | 'gate' | 'stop' | 'status'> {
  run(workflow: WorkflowName, input: unknown): Promise<Pick<StartedRun, 'id' | 'kind' | 'executionArn'>>;
  /**
   * Starts the side-by-side environment upgrade (statemachines/environment-upgrade.asl.json) with
   * `{environmentId, request}` as the execution `executionName`.
   */
  startEnvironmentUpgrade(input: { environmentId: number; request: unknown }, executionName: string): Promise<{ id: string; executionArn: string }>;
  /** The session id the environment upgrade started as `executionName` gets (derived from its execution ARN, as its first activity derives it). */
  environmentUpgradeId(executionName: string): string;
  /** Removes an upgrade session that has ended (CRUS's DELETE of a finished session); see SessionStore.removeEnded. */
  removeSession(id: string): Promise<{ state: string }>;
  /** Removes a group deployment that has ended, by the same rule; see DeploymentStore.removeEnded. */
  removeDeployment(id: string): Promise<{ status: string }>;
  /** The control plane's clock (simulated time on the embedded default), epoch ms. */
  now(): number;
}
