import type { ChildUpgrade, EnvironmentUpgradePhase, EnvironmentUpgradeSession, EnvironmentUpgradeState } from '../../core/environments';
import type { FieldProblem } from '../../core/errors';
import type { NodeStatus } from '../../core/rolling-upgrade/session';
import type { SessionView } from '../runtime';

/** A child rolling upgrade as the environment upgrade's report shows it. */
export interface ChildUpgradeReport {
  upgradeId: string;
  nodes: string[];
  /** Absent until the child has opened its session. */
  state?: string;
  stage?: string;
  counts?: Record<NodeStatus, number>;
}

/** An environment upgrade as GET /sessions/{id} and `rollout env upgrade` show it. */
export interface EnvironmentUpgradeReport {
  upgradeId: string;
  kind: EnvironmentUpgradeSession['kind'];
  environmentId: number;
  releaseId?: number;
  seedId?: number;
  state: EnvironmentUpgradeState;
  completed: boolean;
  /** On its clock (see simulatedTime): JSON shows it as every run's createdAt (view-json.ts recordJson). */
  createdAt: string;
  simulatedTime?: boolean;
  wallCreatedAt?: string;
  progress: { phase: EnvironmentUpgradePhase };
  messages: string[];
  failure?: { error: string; problems: FieldProblem[] };
  /** The rolling upgrades it ran, each a session of its own (GET /sessions/{upgradeId}). */
  rollingUpgrades: { controllers?: ChildUpgradeReport; nodes?: ChildUpgradeReport };
}

/** The summary a listing shows: the report without the children's counts. */
export type EnvironmentUpgradeSummary = Omit<EnvironmentUpgradeReport, 'rollingUpgrades' | 'messages'>;

export function summarizeEnvironmentUpgrade(session: EnvironmentUpgradeSession): EnvironmentUpgradeSummary {
  const { upgradeId, kind, environmentId, releaseId, state, completed, createdAt, simulatedTime, wallCreatedAt, progress, failure } = session;
  return {
    upgradeId,
    kind,
    environmentId,
    ...(releaseId !== undefined ? { releaseId } : {}),
    ...(progress.seedId !== undefined ? { seedId: progress.seedId } : {}),
    state,
    completed,
    createdAt,
    ...(simulatedTime ? { simulatedTime, ...(wallCreatedAt ? { wallCreatedAt } : {}) } : {}),
    progress: { phase: progress.phase },
    ...(failure ? { failure } : {}),
  };
}

export async function buildEnvironmentUpgradeReport(
  sessions: { session(id: string): Promise<SessionView | undefined> },
  session: EnvironmentUpgradeSession,
): Promise<EnvironmentUpgradeReport> {
  const child = async (run: ChildUpgrade | undefined): Promise<ChildUpgradeReport | undefined> => {
    if (!run) return undefined;
    const view = await sessions.session(run.upgradeId);
    const report = view?.kind === 'upgrade' ? view.report : undefined;
    return { upgradeId: run.upgradeId, nodes: run.nodes, ...(report ? { state: report.state, stage: report.progress.stage, counts: report.counts } : {}) };
  };
  const [controllers, nodes] = await Promise.all([child(session.progress.controllers), child(session.progress.nodes)]);
  return {
    ...summarizeEnvironmentUpgrade(session),
    messages: session.messages,
    rollingUpgrades: { ...(controllers ? { controllers } : {}), ...(nodes ? { nodes } : {}) },
  };
}
