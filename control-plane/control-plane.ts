import { randomUUID } from 'node:crypto';
import type { WorkflowName } from '../contracts';
import { describeError, ResourceConflictError, SessionGateError, SessionNotFoundError, TaskRunNotFoundError } from '../core/errors';
import { groupTaskRunId } from '../core/task-graph';
import { idForExecution } from '../core/execution-id';
import { executionRunsSession, SESSION_CONTROL_KEYS } from '../core/session-control';
import type { SiteState } from '../core/site/site-state';
import type { UpgradeSession } from '../core/rolling-upgrade/session';
import type { ExecutionStatus, ExecutionSummary, Executions } from '../ports/executions';
import type { RunRecord, RunRecords } from '../ports/run-records';
import type { ScheduleClient } from './aws-client/schedule-client';
import type { SiteEventKind } from '../core/site/site-event';
import { OPERATOR_WAKE_OUTPUT, SITE_EVENT_WAKE_OUTPUT } from './operator-wake';
import { buildDeploymentReport } from './reports/deployment-report';
import { buildLiveSessionReport, type LiveSessionReport } from './reports/live-session';
import { runProgress } from './reports/run-progress';
import { buildSessionReport } from './reports/session-report';
import { buildTaskRunView, type TaskRunView } from './reports/task-run-report';
import { refuseResumeWhileRunning } from './resume-check';
import { findRun, listRuns, runEnded, runState, type RunStores } from './run-records';
import {
  runKindOf,
  type CancelResult,
  type GateResult,
  type RunOutcome,
  type SessionKind,
  type SessionListing,
  type SessionProgress,
  type SessionStatus,
  type SessionView,
  type StartedRun,
  type StopResult,
} from './runtime';

export interface ControlPlaneOptions<End extends RunOutcome> extends RunStores {
  /** The three stores' records by id, each id resolved in one read (adapters/dynamodb/dynamodb-run-records.ts over the same table). */
  records: RunRecords;
  /** The workflows' executions: the Step Functions API through the SDK, or the local engine in this process. */
  executions: Executions<End>;
  /** The control plane's clock in ms (simulated time on a simulated site); the wall clock without it. */
  now?: () => number;
  /** Whether `now` is a simulated site's clock (its instants are not dates); false without it. */
  simulatedTime?: boolean;
  /** The simulated site's state, when the site is simulated in this process. */
  siteState?: () => SiteState | undefined;
  /** The control plane's schedules (EventBridge Scheduler), made on first use; none without it. */
  schedules?: () => ScheduleClient;
  /** Whether the executions are AWS's own API (its quotas: a watcher polls gently). */
  onAws?: boolean;
  /** What closes with the control plane, after the executions (a data directory, an in-process runtime). */
  onClose?: () => Promise<void>;
}

const WORKFLOW_OF: Readonly<Record<SessionKind, WorkflowName>> = { upgrade: 'rollingUpgrade', deployment: 'groupDeployment', tasks: 'taskGraph' };

/**
 * The control plane: upgrades, deployments and task runs, started, read, stopped, cancelled, gated and
 * resumed over the run stores and the workflows' Executions. One class for every entry point (the CLI,
 * the REST API, `rollout serve`, the tests); what differs between AWS and the embedded default is only
 * the Executions given (control-plane/aws-client/sfn-executions.ts, local/local-executions.ts). A run
 * = StartExecution; the reads = the stores' reads (each id resolved to its record once, in one read: findRun);
 * cancel, stop and the gate = the store's request that the running workflow picks up.
 */
export class ControlPlane<End extends RunOutcome = RunOutcome> {
  protected readonly stores: RunStores;
  private readonly records: RunRecords;
  /** The workflows' executions (the Executions port). */
  private readonly port: Executions<End>;
  /** Whether the executions are AWS's own API (its quotas: a watcher polls gently). */
  readonly onAws: boolean;
  /** Whether `now()` is a simulated site's clock: what the control plane records on it is shown as time from a run's start, never as a date. */
  readonly simulatedTime: boolean;
  private readonly clockNow: () => number;
  private readonly readSiteState: () => SiteState | undefined;
  private readonly makeSchedules: (() => ScheduleClient) | undefined;
  private scheduleClient: ScheduleClient | undefined;
  private readonly closers: (() => Promise<void>)[] = [];
  /** Inputs of executions read by isRunning (an execution's input never changes). */
  private readonly inputs = new Map<string, unknown>();

  constructor(options: ControlPlaneOptions<End>) {
    this.stores = { upgrades: options.upgrades, deployments: options.deployments, taskRuns: options.taskRuns };
    this.records = options.records;
    this.port = options.executions;
    this.onAws = options.onAws ?? false;
    this.clockNow = options.now ?? Date.now;
    this.simulatedTime = options.simulatedTime ?? false;
    this.readSiteState = options.siteState ?? (() => undefined);
    this.makeSchedules = options.schedules;
    if (options.onClose) this.closers.push(options.onClose);
  }

  /** Starts a workflow with `input` exactly as the console would take it; `executionName` is a fresh UUID unless given. */
  async run(workflow: WorkflowName, input: unknown, executionName: string = randomUUID()): Promise<StartedRun<End>> {
    const { executionArn } = await this.port.start(workflow, input, executionName);
    // As the first activity of each workflow derives it from $$.Execution.Id.
    return this.withOutcome({ workflow, kind: runKindOf(workflow), id: idForExecution(executionArn), executionArn }, executionArn);
  }

  /**
   * Carries an upgrade, a deployment or a task run on from the store: a new execution with
   * `{resumeUpgradeId}` / `{resumeDeploymentId}` / `{resumeRunId}`, named after the session so that
   * watch and cancel know it is the session's. Refused (SessionStillRunningError, nothing started)
   * while an execution still runs the session (see refuseResumeWhileRunning), and for an id no run has
   * (SessionNotFoundError: nothing to carry on).
   */
  async resume(kind: SessionKind, id: string): Promise<StartedRun<End>> {
    // Running first, then the record: an execution that ends meanwhile has stored its end state before it ended.
    const running = await this.isRunning(kind, id);
    const run = await this.found(id);
    refuseResumeWhileRunning(kind, id, running, { ...runState(run), ended: runEnded(run) });
    return this.run(WORKFLOW_OF[kind], { [SESSION_CONTROL_KEYS[kind].resume]: id }, `${id}-resume-${Date.now().toString(36)}`);
  }

  /** Starts the side-by-side upgrade of an environment (statemachines/environment-upgrade.asl.json) with `{environmentId, request}`. */
  async startEnvironmentUpgrade(input: unknown, executionName: string = randomUUID()): Promise<{ id: string; executionArn: string; outcome: Promise<End> }> {
    const { executionArn } = await this.port.start('environmentUpgrade', input, executionName);
    return this.withOutcome({ id: idForExecution(executionArn), executionArn }, executionArn);
  }

  /** The session id the environment upgrade started as `executionName` gets (derived from its execution ARN, as its first activity derives it). */
  environmentUpgradeId(executionName: string): string {
    return idForExecution(this.port.executionArn('environmentUpgrade', executionName));
  }

  /**
   * `value` with the outcome of the chain `executionArn` starts, followed on first use only: the REST
   * API (a Lambda) starts runs it never waits for. A caller that never awaits it must not see an
   * unhandled rejection.
   */
  private withOutcome<T extends object>(value: T, executionArn: string): T & { readonly outcome: Promise<End> } {
    let outcome: Promise<End> | undefined;
    const follow = (): Promise<End> => {
      outcome = this.follow(executionArn);
      outcome.catch(() => undefined);
      return outcome;
    };
    return Object.defineProperty(value, 'outcome', { enumerable: true, get: () => outcome ?? follow() }) as T & { readonly outcome: Promise<End> };
  }

  /** The outcome of the last execution of the chain `executionArn` starts (continue-as-new: output.continuedAs.executionArn). */
  async follow(executionArn: string): Promise<End> {
    let arn = executionArn;
    for (;;) {
      const ended = await this.port.ended(arn);
      const next = (ended.output as { continuedAs?: { executionArn?: unknown } } | undefined)?.continuedAs?.executionArn;
      if (ended.status !== 'SUCCEEDED' || typeof next !== 'string') return ended;
      arn = next;
    }
  }

  /** Upgrades, deployments and task runs (standalone: a group's deploy phase is its deployment's), newest first. */
  sessions(): Promise<SessionListing[]> {
    return listRuns(this.stores);
  }

  /** One session's report, or undefined for an id no upgrade, deployment or task run has. */
  async session(id: string): Promise<SessionView | undefined> {
    const run = await findRun(this.records, id);
    switch (run?.kind) {
      case undefined:
        return undefined;
      case 'upgrade':
        return { kind: 'upgrade', report: await buildSessionReport(this.stores.upgrades, run.record) };
      case 'deployment':
        return { kind: 'deployment', report: await buildDeploymentReport(this.stores.deployments, run.record) };
      case 'tasks':
        return {
          kind: 'tasks',
          report: { ...(await buildTaskRunView(this.stores.taskRuns, run.record)), messages: await this.stores.taskRuns.messages.list(id) },
        };
    }
  }

  /** A task run's report (each node's task states, why each blocked task is blocked); undefined for an id no run has. */
  async taskRun(id: string): Promise<TaskRunView | undefined> {
    const run = await findRun(this.records, id);
    return run?.kind === 'tasks' ? buildTaskRunView(this.stores.taskRuns, run.record) : undefined;
  }

  /** A cheap progress read for a display polling every quarter second; undefined until the session exists. */
  async progress(id: string): Promise<SessionProgress | undefined> {
    const run = await findRun(this.records, id);
    return run && runProgress(this.stores, run);
  }

  /**
   * What the live view redraws an upgrade from, each second: its progress and its report over the
   * nodes in flight alone (reports/live-session.ts); undefined for an id no upgrade has.
   */
  async liveUpgrade(id: string): Promise<{ progress: SessionProgress; report: LiveSessionReport } | undefined> {
    const run = await findRun(this.records, id);
    if (run?.kind !== 'upgrade') return undefined;
    const [progress, report] = await Promise.all([runProgress(this.stores, run), buildLiveSessionReport(this.stores.upgrades, run.record)]);
    return { progress, report };
  }

  /** Its state from its one item, and whether it has ended (READY, DELETED, HALTED; SUCCEEDED, FAILED, CANCELLED; STOPPED until resumed). */
  async status(id: string): Promise<SessionStatus | undefined> {
    const run = await findRun(this.records, id);
    return run && { ...runState(run), ended: runEnded(run) };
  }

  /**
   * Whether an execution works on the session now (the running executions of its workflow, named after
   * it or resuming it; each one's input is read once, when its name does not say): a session that has
   * not ended and that nothing runs (stopped, its process died) waits for `rollout session resume`.
   */
  async isRunning(kind: SessionKind, id: string): Promise<boolean> {
    for (const execution of await this.port.list(WORKFLOW_OF[kind], 'RUNNING')) {
      if (executionRunsSession(kind, id, execution)) return true;
      if (!this.inputs.has(execution.executionArn)) this.inputs.set(execution.executionArn, (await this.port.describe(execution.executionArn))?.input);
      if (executionRunsSession(kind, id, execution, this.inputs.get(execution.executionArn))) return true;
    }
    return false;
  }

  /**
   * Cancel an upgrade the CRUS way (UPDATING -> DELETING, and the workflow applies the deletion
   * rules), a deployment (RUNNING -> CANCELLING: no group or batch starts after it, actions in
   * flight finish, it ends CANCELLED) or a task run (RUNNING -> CANCELLING: no task starts after it,
   * tasks in flight finish, its own drains are lifted, it ends CANCELLED). `running` says whether an
   * execution is there to pick it up (else: `rollout session resume`). Throws SessionNotFoundError or SessionNotCancellableError.
   */
  async cancel(id: string): Promise<CancelResult> {
    const run = await this.found(id);
    const runningBefore = await this.runningBeforeRequest(run, id);
    const requested = await this.request(run, id, 'cancel');
    return { ...requested, running: runningBefore || (await this.isRunning(run.kind, id)) } as CancelResult;
  }

  /**
   * Stop an upgrade, a deployment or a task run (UPDATING -> STOPPING, RUNNING -> STOPPING): what is in flight
   * finishes, nothing new starts, what was not started is left as it was, and it ends STOPPED, to be
   * carried on by a resume. Throws SessionNotFoundError or SessionNotStoppableError.
   */
  async stop(id: string): Promise<StopResult> {
    const run = await this.found(id);
    const runningBefore = await this.runningBeforeRequest(run, id);
    const requested = await this.request(run, id, 'stop');
    return { ...requested, running: runningBefore || (await this.isRunning(run.kind, id)) } as StopResult;
  }

  /**
   * Mode window, the operator's gate kept on the session: `pause` stops new nodes from starting
   * (nodes in flight finish), `unpause` lifts it, `approve` lets the batch waited for start. The
   * running workflow reads it on its next increment. Throws SessionNotFoundError or SessionGateError.
   */
  async gate(id: string, action: 'pause' | 'unpause' | 'approve'): Promise<GateResult> {
    const run = await findRun(this.records, id);
    if (run?.kind !== 'upgrade') throw new SessionNotFoundError(id);
    const session = run.record;
    if (session.mode !== 'window') throw new SessionGateError(id, action, "only a session in mode 'window' has the gate");
    if (session.completed || (session.state !== 'UPDATING' && session.state !== 'DELETING'))
      throw new SessionGateError(id, action, `the session is ${session.state}`);
    const running = await this.isRunning('upgrade', id);
    if (action !== 'approve') {
      const updated = await this.stores.upgrades.setOperatorGate(id, { paused: action === 'pause' });
      // A pause closes the gate further: nothing parked needs waking for it.
      const wakeError = action === 'unpause' ? await this.wakeUp(updated) : undefined;
      return { id, action, running, ...(wakeError ? { wakeError } : {}) };
    }
    const wave = session.progress.window?.awaitingApproval;
    if (wave === undefined)
      throw new SessionGateError(
        id,
        action,
        `it is not waiting for an approval${session.progress.window?.waiting ? ` (waiting: ${session.progress.window.waiting})` : ''}`,
      );
    const wakeError = await this.wakeUp(await this.stores.upgrades.setOperatorGate(id, { approveWave: wave }));
    return { id, action, batch: wave + 1, running, ...(wakeError ? { wakeError } : {}) };
  }

  /** Removes an upgrade session that has ended (CRUS's DELETE of a finished session); see SessionStore.removeEnded. */
  removeSession(id: string): Promise<{ state: string }> {
    return this.stores.upgrades.removeEnded(id);
  }

  /**
   * Removes a group deployment that has ended, by the same rule (see DeploymentStore.removeEnded), and its
   * groups' deploy phases when it ran a task graph: task runs in partitions of their own, which nothing else
   * removes (removeTaskRun refuses them). A group whose deploy phase never started has none.
   */
  async removeDeployment(id: string): Promise<{ status: string }> {
    const removed = await this.stores.deployments.removeEnded(id);
    if (removed.settings.taskGraph) {
      for (const group of Object.keys(removed.state.groups)) {
        await this.stores.taskRuns.removeEnded(groupTaskRunId(id, group)).catch((err: unknown) => {
          if (!(err instanceof TaskRunNotFoundError)) throw err;
        });
      }
    }
    return removed;
  }

  /**
   * Removes a standalone task run that has ended, by the same rule; see TaskRunStore.removeEnded. A group's deploy
   * phase is its deployment's (ResourceConflictError): removed with it.
   */
  async removeTaskRun(id: string): Promise<{ status: string }> {
    const run = await this.found(id);
    const deployment = run.kind === 'tasks' ? run.record.deployment : undefined;
    if (deployment)
      throw new ResourceConflictError(`task run ${id}`, [
        {
          field: '',
          message: `it is the deploy phase of group '${deployment.group}' of deployment ${deployment.deploymentId}: it is removed with its deployment`,
        },
      ]);
    return this.stores.taskRuns.removeEnded(id);
  }

  /** The executions of a workflow, newest first. */
  executions(workflow: WorkflowName, status?: ExecutionStatus): Promise<ExecutionSummary[]> {
    return this.port.list(workflow, status);
  }

  /** Aborts an execution as StopExecution does on AWS: no cleanup (drained nodes stay drained, locks stay). Not a session's stop (see stop). */
  abortExecution(executionArn: string, cause?: string): Promise<void> {
    return this.port.stop(executionArn, cause);
  }

  /** The control plane's schedules (EventBridge Scheduler), made on first use. */
  get schedules(): ScheduleClient {
    if (!this.makeSchedules) throw new Error('schedules live in a running control plane: a `rollout serve` or the deployed stack');
    this.scheduleClient ??= this.makeSchedules();
    return this.scheduleClient;
  }

  /** The simulated site's state; undefined for a real site. */
  siteState(): SiteState | undefined {
    return this.readSiteState();
  }

  /** The site's clock in ms (simulated time on a simulated site). */
  now(): number {
    return this.clockNow();
  }

  /** Runs `closer` when the control plane closes, before what it was given at construction (the services that serve it, say). */
  closeAlso(closer: () => Promise<void>): void {
    this.closers.unshift(closer);
  }

  async close(): Promise<void> {
    this.scheduleClient?.close();
    this.port.close();
    for (const closer of this.closers) await closer();
  }

  private async found(id: string): Promise<RunRecord> {
    const run = await findRun(this.records, id);
    if (!run) throw new SessionNotFoundError(id);
    return run;
  }

  /**
   * Whether an execution works on the run just before a cancel or stop request is written: the
   * execution that picks the request up may end at once (on virtual time, within milliseconds), and
   * it was there to pick it up all the same.
   */
  private async runningBeforeRequest(run: RunRecord, id: string): Promise<boolean> {
    return !runEnded(run) && (await this.isRunning(run.kind, id));
  }

  /** Writes the cancel or stop request in the run's own store; a workflow parked for its operator (an approval, a pause) or for the site must wake to act on it. */
  private async request(run: RunRecord, id: string, what: 'cancel' | 'stop'): Promise<Omit<CancelResult, 'running'>> {
    switch (run.kind) {
      case 'upgrade': {
        const session = what === 'cancel' ? await this.stores.upgrades.requestCancel(id) : await this.stores.upgrades.requestStop(id);
        const wakeError = await this.wakeUp(session);
        return { id, kind: 'upgrade', state: session.state, ...(wakeError ? { wakeError } : {}) };
      }
      case 'deployment': {
        const deployment = what === 'cancel' ? await this.stores.deployments.requestCancel(id) : await this.stores.deployments.requestStop(id);
        return { id, kind: 'deployment', state: deployment.status };
      }
      case 'tasks': {
        const taskRun = what === 'cancel' ? await this.stores.taskRuns.requestCancel(id) : await this.stores.taskRuns.requestStop(id);
        return { id, kind: 'tasks', state: taskRun.status };
      }
    }
  }

  /**
   * A site event for `sessionId` was delivered (issue 29; an operator's request: no `event`): counts it on the session
   * and wakes the workflow parked in `Wait For Site Event`, if one is and the event is one its wait ends on. A wake that fails is said, not thrown: the backstop poll wakes it anyway.
   */
  async wakeForSiteEvent(sessionId: string, event?: SiteEventKind): Promise<{ woke: boolean; wakeError?: string }> {
    const parked = await this.stores.upgrades.noteSiteEvent(sessionId, event);
    if (!parked?.taskToken) return { woke: false };
    try {
      await this.port.sendTaskSuccess(parked.taskToken, SITE_EVENT_WAKE_OUTPUT);
      return { woke: true };
    } catch (err) {
      return { woke: false, wakeError: describeError(err) };
    }
  }

  /**
   * Wakes the execution parked with the session's stored token, if any. The request is stored already,
   * so a wake that fails (the control plane unreachable) is said, not thrown: the same command again
   * sends the token again (the task waits for it until then).
   */
  private async wakeUp(session: UpgradeSession): Promise<string | undefined> {
    // A workflow parked for the site's events must act on the request too, not at its backstop; one about to park
    // must not: the request counts as an event (its park then fails, and it looks again at once).
    const site = session.siteTriggers && 'backstopSeconds' in session.siteTriggers ? await this.wakeForSiteEvent(session.upgradeId) : undefined;
    const token = session.operator?.taskToken;
    if (!token) return site?.wakeError;
    try {
      await this.port.sendTaskSuccess(token, OPERATOR_WAKE_OUTPUT);
      return site?.wakeError;
    } catch (err) {
      return describeError(err);
    }
  }
}

/** What the REST API needs of a control plane (the deployed Lambda builds one over Step Functions and the table). */
export type ApiControlPlane = Pick<
  ControlPlane,
  | 'sessions'
  | 'session'
  | 'cancel'
  | 'gate'
  | 'stop'
  | 'status'
  | 'run'
  | 'resume'
  | 'startEnvironmentUpgrade'
  | 'environmentUpgradeId'
  | 'removeSession'
  | 'removeDeployment'
  | 'removeTaskRun'
  | 'now'
  | 'simulatedTime'
  | 'wakeForSiteEvent'
>;
