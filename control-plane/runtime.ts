import type { WorkflowName } from '../contracts';
import type { DeploymentStage } from '../core/group-deployment';
import type { SessionState, Stage, UpgradeSession } from '../core/rolling-upgrade/session';
import type { DeploymentRecord, DeploymentStatus } from '../ports/deployment-store';
import type { DeploymentReport } from './reports/deployment-report';
import type { SessionReport } from './reports/session-report';
import type { TaskRunView } from './reports/task-run-report';
import type { OperationState } from '../core/scheduling';
import type { TaskRunRecord, TaskRunStatus } from '../ports/task-run-store';
import type { ExecutionEnd } from '../ports/executions';

export type { WorkflowName } from '../contracts';

/*
 * What the control plane (control-plane/control-plane.ts: ControlPlane) answers: a started run, a
 * session's listing, view, progress and status, and the results of cancel, stop and the gate.
 */

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
export type RunOutcome = ExecutionEnd;

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
      /** When it should end, the plan made again over the nodes left (epoch ms, the session's clock), and whether that clock is simulated. */
      estimate?: { endsAt: number; basis: string };
      simulatedTime?: boolean;
      /** The session's newest message (e.g. that a group it needs does not exist). */
      message?: string;
    }
  | { kind: 'deployment'; status: DeploymentStatus; groups: Record<DeploymentStage, number>; nodes: Record<DeploymentStage, number> }
  | { kind: 'tasks'; status: TaskRunStatus; counts: Record<OperationState, number>; nodeCount: number; message?: string };
