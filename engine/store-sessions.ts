import { DEPLOYMENT_STAGES, type DeploymentStage } from '../core/group-deployment';
import { isDeploymentEnded, type DeploymentStore } from '../ports/deployment-store';
import type { ProgressTally } from '../core/rolling-upgrade/session';
import type { SessionStore } from '../ports/session-store';
import type { TaskRunStore } from '../ports/task-run-store';
import { buildTaskRunView, type TaskRunView } from './reports/task-run-report';
import { buildDeploymentReport } from './reports/deployment-report';
import { buildSessionReport } from './reports/session-report';
import { SessionGateError, SessionNotFoundError } from '../core/errors';
import type { CancelResult, GateResult, RolloutSessions, SessionListing, SessionProgress, SessionStatus, SessionView } from './runtime';

/**
 * The read and cancel half of the facade over the two stores, as any observer of the table sees
 * it: the process that runs the workflows, or a `rollout session` command reaching its database.
 */
export class StoreSessions implements RolloutSessions {
  constructor(
    private readonly upgrades: SessionStore,
    private readonly deployments: DeploymentStore,
    private readonly taskRuns: TaskRunStore,
    /** Whether a process that runs workflows holds the sessions (this one or the one reached). */
    private readonly running: boolean,
    private readonly onClose: () => Promise<void> = async () => undefined,
    /**
     * How progress counts nodes: every node record (exact; cheap on a local table), or the tally on
     * the session item (one read per poll: a deployed stack's table, where a 10,000-node session's
     * records cost read units at every poll).
     */
    private readonly counting: 'records' | 'tally' = 'records',
  ) {}

  async sessions(): Promise<SessionListing[]> {
    const [upgrades, deployments] = await Promise.all([this.upgrades.listSessions(), this.deployments.listDeployments()]);
    const listed: SessionListing[] = [
      ...upgrades.map((session) => ({ kind: 'upgrade' as const, id: session.upgradeId, createdAt: session.createdAt, session })),
      ...deployments.map((deployment) => ({ kind: 'deployment' as const, id: deployment.deploymentId, createdAt: deployment.createdAt, deployment })),
    ];
    // Newest first, as each store lists them; ISO timestamps sort as text.
    return listed.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  async session(id: string): Promise<SessionView | undefined> {
    const upgrade = await this.upgrades.getSession(id);
    if (upgrade) return { kind: 'upgrade', report: await buildSessionReport(this.upgrades, upgrade) };
    const deployment = await this.deployments.getDeployment(id);
    if (deployment) return { kind: 'deployment', report: await buildDeploymentReport(this.deployments, deployment) };
    return undefined;
  }

  async cancel(id: string): Promise<CancelResult> {
    if (!(await this.upgrades.getSession(id)) && (await this.deployments.getDeployment(id))) {
      const deployment = await this.deployments.requestCancel(id);
      return { id, kind: 'deployment', state: deployment.status, running: this.running };
    }
    const session = await this.upgrades.requestCancel(id);
    return { id, kind: 'upgrade', state: session.state, running: this.running };
  }

  async gate(id: string, action: 'pause' | 'unpause' | 'approve'): Promise<GateResult> {
    const session = await this.upgrades.getSession(id);
    if (!session) throw new SessionNotFoundError(id);
    if (session.mode !== 'window') throw new SessionGateError(id, action, "only a session in mode 'window' has the gate");
    if (session.completed || (session.state !== 'UPDATING' && session.state !== 'DELETING')) throw new SessionGateError(id, action, `the session is ${session.state}`);
    if (action !== 'approve') {
      await this.upgrades.setOperatorGate(id, { paused: action === 'pause' });
      return { id, action, running: this.running };
    }
    const wave = session.progress.window?.awaitingApproval;
    if (wave === undefined) throw new SessionGateError(id, action, `it is not waiting for an approval${session.progress.window?.waiting ? ` (waiting: ${session.progress.window.waiting})` : ''}`);
    await this.upgrades.setOperatorGate(id, { approveWave: wave });
    return { id, action, batch: wave + 1, running: this.running };
  }

  async progress(id: string): Promise<SessionProgress | undefined> {
    const session = await this.upgrades.getSession(id);
    if (session) {
      const { step, stage, window, tally } = session.progress;
      const [counts, message] = await Promise.all([this.counting === 'tally' && tally ? tally : this.countNodes(id), this.upgrades.latestMessage(id)]);
      const { upgraded, failed, inFlight = 0, draining = 0 } = counts;
      return {
        kind: 'upgrade',
        step,
        steps: session.stepCount,
        stage,
        total: session.nodeCount,
        upgraded,
        failed,
        ...(window
          ? { window: { inFlight, draining, ...(window.waiting ? { waiting: window.waiting } : {}), ...(window.halted ? { halted: window.halted.reason } : {}) } }
          : {}),
        ...(message === undefined ? {} : { message }),
      };
    }
    const deployment = await this.deployments.getDeployment(id);
    if (!deployment) {
      const run = await this.taskRuns.getRun(id);
      return run && { kind: 'tasks', status: run.status, counts: run.counts, nodeCount: run.nodeCount };
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
    const session = await this.upgrades.getSession(id);
    if (session) return { kind: 'upgrade', state: session.state, ended: session.completed || session.state === 'DELETED' || session.state === 'HALTED' || session.state === 'READY' };
    const deployment = await this.deployments.getDeployment(id);
    return deployment && { kind: 'deployment', state: deployment.status, ended: isDeploymentEnded(deployment.status) };
  }

  private async countNodes(id: string): Promise<Required<ProgressTally>> {
    const nodes = await this.upgrades.listNodes(id);
    const count = (match: (node: (typeof nodes)[number]) => boolean) => nodes.filter(match).length;
    return {
      upgraded: count((node) => node.status === 'UPGRADED'),
      failed: count((node) => node.status === 'FAILED'),
      inFlight: count((node) => node.status === 'IN_PROGRESS'),
      draining: count((node) => node.status === 'IN_PROGRESS' && node.phase === 'DRAINING'),
    };
  }

  async taskRun(id: string): Promise<TaskRunView | undefined> {
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
