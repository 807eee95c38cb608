import { DEPLOYMENT_STAGES, type DeploymentStage } from '../core/group-deployment';
import { isDeploymentEnded, type DeploymentStore } from '../ports/deployment-store';
import type { SessionStore } from '../ports/session-store';
import { isTaskRunSettled, type TaskRunStore } from '../ports/task-run-store';
import { buildTaskRunView, type TaskRunView } from './reports/task-run-report';
import { buildDeploymentReport } from './reports/deployment-report';
import { buildSessionReport } from './reports/session-report';
import { describeError, SessionGateError, SessionNotFoundError } from '../core/errors';
import { isSessionSettled, type UpgradeSession } from '../core/rolling-upgrade/session';
import { upgradePolicy } from '../core/rolling-upgrade/upgrade-policy';
import { isPossibleSessionId } from '../core/execution-id';
import type { OperatorWake } from './operator-wake';
import type { CancelResult, GateResult, RolloutSessions, SessionListing, SessionProgress, SessionStatus, SessionView, StopResult } from './runtime';

export interface StoreSessionsOptions {
  upgrades: SessionStore;
  deployments: DeploymentStore;
  taskRuns: TaskRunStore;
  /** Whether a process that runs workflows holds the sessions (this one or the one reached). */
  running: boolean;
  /** Closes what the sessions were read through (a data directory, a client). */
  onClose?: () => Promise<void>;
  /** Sends SendTaskSuccess to a workflow parked for its operator; without it (no process runs the session) the gate is only stored. */
  wake?: OperatorWake;
}

/**
 * The read and cancel half of the facade over the two stores, as any observer of the table sees
 * it: the process that runs the workflows, or a `rollout session` command reaching its database.
 */
export class StoreSessions implements RolloutSessions {
  private readonly upgrades: SessionStore;
  private readonly deployments: DeploymentStore;
  private readonly taskRuns: TaskRunStore;
  private readonly running: boolean;
  private readonly onClose: () => Promise<void>;
  private readonly wake?: OperatorWake;

  constructor(options: StoreSessionsOptions) {
    this.upgrades = options.upgrades;
    this.deployments = options.deployments;
    this.taskRuns = options.taskRuns;
    this.running = options.running;
    this.onClose = options.onClose ?? (async () => undefined);
    this.wake = options.wake;
  }

  async sessions(): Promise<SessionListing[]> {
    const [upgrades, deployments, taskRuns] = await Promise.all([this.upgrades.list(), this.deployments.list(), this.taskRuns.list()]);
    const listed: SessionListing[] = [
      ...upgrades.map((session) => ({ kind: 'upgrade' as const, id: session.upgradeId, createdAt: session.createdAt, session })),
      ...deployments.map((deployment) => ({ kind: 'deployment' as const, id: deployment.deploymentId, createdAt: deployment.createdAt, deployment })),
      ...taskRuns.map((taskRun) => ({ kind: 'tasks' as const, id: taskRun.runId, createdAt: taskRun.createdAt, taskRun })),
    ];
    // Newest first, as each store lists them; ISO timestamps sort as text.
    return listed.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  async session(id: string): Promise<SessionView | undefined> {
    // An id no session can have is not looked up (a key over DynamoDB's limit is an error, not "not found").
    if (!isPossibleSessionId(id)) return undefined;
    const upgrade = await this.upgrades.getSession(id);
    if (upgrade) return { kind: 'upgrade', report: await buildSessionReport(this.upgrades, upgrade) };
    const deployment = await this.deployments.getDeployment(id);
    if (deployment) return { kind: 'deployment', report: await buildDeploymentReport(this.deployments, deployment) };
    const run = await this.taskRuns.getRun(id);
    if (run) return { kind: 'tasks', report: { ...(await buildTaskRunView(this.taskRuns, run)), messages: await this.taskRuns.messages.list(id) } };
    return undefined;
  }

  async cancel(id: string): Promise<CancelResult> {
    if (!isPossibleSessionId(id)) throw new SessionNotFoundError(id);
    const before = await this.upgrades.getSession(id);
    if (!before) {
      const deployment = await this.deployments.getDeployment(id);
      if (deployment) {
        const cancelled = await this.deployments.requestCancel(id);
        // Nothing runs a stopped deployment: its resume winds it down.
        return { id, kind: 'deployment', state: cancelled.status, running: this.running && deployment.status !== 'STOPPED' };
      }
    }
    const taskRun = before ? undefined : await this.taskRuns.getRun(id);
    if (taskRun) {
      const run = await this.taskRuns.requestCancel(id);
      // Nothing runs a stopped task run: its resume winds it down.
      return { id, kind: 'tasks', state: run.status, running: this.running && taskRun.status !== 'STOPPED' };
    }
    const session = await this.upgrades.requestCancel(id);
    // A workflow parked for its operator must wake to apply the deletion rules.
    const wakeError = await this.wakeUp(session);
    // Nothing runs a stopped session: its resume applies the deletion rules.
    return { id, kind: 'upgrade', state: session.state, running: this.running && before?.state !== 'STOPPED', ...(wakeError ? { wakeError } : {}) };
  }

  async stop(id: string): Promise<StopResult> {
    if (!(await this.upgrades.getSession(id)) && !(await this.deployments.getDeployment(id)) && (await this.taskRuns.getRun(id))) {
      const run = await this.taskRuns.requestStop(id);
      return { id, kind: 'tasks', state: run.status, running: this.running };
    }
    if (!(await this.upgrades.getSession(id)) && (await this.deployments.getDeployment(id))) {
      const deployment = await this.deployments.requestStop(id);
      return { id, kind: 'deployment', state: deployment.status, running: this.running };
    }
    const session = await this.upgrades.requestStop(id);
    // A workflow parked for its operator (an approval, a pause) must wake to stop.
    const wakeError = await this.wakeUp(session);
    return { id, kind: 'upgrade', state: session.state, running: this.running, ...(wakeError ? { wakeError } : {}) };
  }

  async gate(id: string, action: 'pause' | 'unpause' | 'approve'): Promise<GateResult> {
    if (!isPossibleSessionId(id)) throw new SessionNotFoundError(id);
    const session = await this.upgrades.getSession(id);
    if (!session) throw new SessionNotFoundError(id);
    if (session.mode !== 'window') throw new SessionGateError(id, action, "only a session in mode 'window' has the gate");
    if (session.completed || (session.state !== 'UPDATING' && session.state !== 'DELETING'))
      throw new SessionGateError(id, action, `the session is ${session.state}`);
    if (action !== 'approve') {
      const updated = await this.upgrades.setOperatorGate(id, { paused: action === 'pause' });
      // A pause closes the gate further: nothing parked needs waking for it.
      const wakeError = action === 'unpause' ? await this.wakeUp(updated) : undefined;
      return { id, action, running: this.running, ...(wakeError ? { wakeError } : {}) };
    }
    const wave = session.progress.window?.awaitingApproval;
    if (wave === undefined)
      throw new SessionGateError(
        id,
        action,
        `it is not waiting for an approval${session.progress.window?.waiting ? ` (waiting: ${session.progress.window.waiting})` : ''}`,
      );
    const wakeError = await this.wakeUp(await this.upgrades.setOperatorGate(id, { approveWave: wave }));
    return { id, action, batch: wave + 1, running: this.running, ...(wakeError ? { wakeError } : {}) };
  }

  /**
   * Wakes the execution parked with the session's stored token, if any. The gate is stored already,
   * so a wake that fails (the control plane unreachable) is said, not thrown: the same command again
   * sends the token again (the task waits for it until then).
   */
  private async wakeUp(session: UpgradeSession): Promise<string | undefined> {
    const token = session.operator?.taskToken;
    if (!token || !this.wake) return undefined;
    try {
      await this.wake(token);
      return undefined;
    } catch (err) {
      return describeError(err);
    }
  }

  async progress(id: string): Promise<SessionProgress | undefined> {
    if (!isPossibleSessionId(id)) return undefined;
    const session = await this.upgrades.getSession(id);
    if (session) {
      // The session item (the workflow keeps the counts there: Progress.counts, the window's in-flight index) and the newest message.
      const { step, stage, window, counts } = session.progress;
      const message = await this.upgrades.messages.latest(id);
      return {
        kind: 'upgrade',
        step,
        steps: session.stepCount,
        stage,
        total: session.nodeCount,
        upgraded: counts?.upgraded ?? 0,
        failed: counts?.failed ?? 0,
        state: session.state,
        ...(session.progress.estimate ? { estimate: session.progress.estimate } : {}),
        ...(session.simulatedTime ? { simulatedTime: true } : {}),
        ...(window
          ? {
              window: {
                // Slot holders only: a node drained ahead holds none (it is not out of service yet).
                inFlight: (window.inFlight?.length ?? 0) - (window.ahead ?? 0),
                cap: upgradePolicy(session, session.nodeCount).maxInTransition,
                ahead: window.ahead ?? 0,
                phases: Object.fromEntries(Object.entries(window.phases ?? {}).map(([phase, n]) => [phase, n ?? 0])),
                draining: window.draining ?? 0,
                ...(window.waiting ? { waiting: window.waiting } : {}),
                ...(window.halted ? { halted: window.halted.reason } : {}),
              },
            }
          : {}),
        ...(message === undefined ? {} : { message }),
      };
    }
    const deployment = await this.deployments.getDeployment(id);
    if (!deployment) {
      const run = await this.taskRuns.getRun(id);
      const message = run && (await this.taskRuns.messages.latest(id));
      return run && { kind: 'tasks', status: run.status, counts: run.counts, nodeCount: run.nodeCount, ...(message === undefined ? {} : { message }) };
    }
    return {
      kind: 'deployment',
      status: deployment.status,
      groups: countStages(Object.values(deployment.state.groups).map((group) => group.stage)),
      nodes: countStages(Object.values(deployment.state.nodes)),
    };
  }

  isRunning(): Promise<boolean> {
    return Promise.resolve(this.running);
  }

  /** The status of an upgrade or a deployment from its one item (no node records, no messages): what a watcher polls. */
  async status(id: string): Promise<SessionStatus | undefined> {
    if (!isPossibleSessionId(id)) return undefined;
    const session = await this.upgrades.getSession(id);
    // STOPPED counts as ended here: no execution works on it until someone resumes it.
    if (session) return { kind: 'upgrade', state: session.state, ended: session.completed || isSessionSettled(session.state) };
    const deployment = await this.deployments.getDeployment(id);
    if (deployment) return { kind: 'deployment', state: deployment.status, ended: isDeploymentEnded(deployment.status) || deployment.status === 'STOPPED' };
    const run = await this.taskRuns.getRun(id);
    return run && { kind: 'tasks', state: run.status, ended: isTaskRunSettled(run.status) };
  }

  async taskRun(id: string): Promise<TaskRunView | undefined> {
    if (!isPossibleSessionId(id)) return undefined;
    const run = await this.taskRuns.getRun(id);
    return run && buildTaskRunView(this.taskRuns, run);
  }

  close(): Promise<void> {
    return this.onClose();
  }
}

function countStages(stages: Iterable<DeploymentStage>): Record<DeploymentStage, number> {
  const counts = Object.fromEntries(DEPLOYMENT_STAGES.map((stage) => [stage, 0])) as Record<DeploymentStage, number>;
  for (const stage of stages) counts[stage]++;
  return counts;
}
