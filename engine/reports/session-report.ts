import type { NodeStatus, Progress, SessionState, UpgradeSession } from '../../core/rolling-upgrade/session';
import type { UpgradeControls } from '../../core/rolling-upgrade/upgrade-request';
import type { SessionStore } from '../../ports/session-store';

export interface NodeReport {
  status: NodeStatus;
  reason?: string;
  /** The workload manager's name of the node where it differs from the inventory's (CSM: `nid000006` for `x3000c0s19b1n0`). */
  wlmName?: string;
}

/** A session as `rollout upgrade --json` and `rollout session get` print it. */
export interface SessionReport {
  upgradeId: string;
  kind: 'ComputeUpgradeSession';
  state: SessionState;
  completed: boolean;
  startingLabel: string;
  upgradingLabel: string;
  failedLabel: string;
  upgradeStepSize: number;
  upgradeTemplateId: string;
  workloadManagerType: string;
  quiesceTimeoutSeconds: number;
  bootTimeoutSeconds: number;
  wlmReturnTimeoutSeconds: number;
  pollIntervalSeconds: number;
  createdAt: string;
  stepCount: number;
  /** The rolling-upgrade controls the session ran with (absent fields: not asked for). */
  controls: SessionControls;
  /** Simulated (or real) seconds from the session's start to its end; absent while it runs. */
  makespanSeconds?: number;
  /** Mode window: why it halted (state HALTED). */
  haltedReason?: string;
  /** Mode window: paused by an operator (`rollout session pause`). */
  paused?: boolean;
  /** Mode window: why startable nodes were not starting at the last increment (e.g. `approval of batch 2`). */
  waiting?: string;
  /** The batch (1-based) that waits for `rollout session approve`, also while paused. */
  awaitingApprovalOfBatch?: number;
  progress: Pick<Progress, 'step' | 'stage'>;
  counts: Record<NodeStatus, number>;
  messages: string[];
  nodes: Record<string, NodeReport>;
}

/** The session's scheduling controls, as its request gave them. */
export type SessionControls = UpgradeControls;

function controlsOf(session: UpgradeSession): SessionControls {
  const { mode, maxUnavailable, drainAhead, order, maxUnavailablePerRack, batches, pauseAfterBatches, approval, maxFailed, haltOnOutsideFailures, bakeSeconds, healthCheck, maintenanceWindows } = session;
  const all = { mode, maxUnavailable, drainAhead, order, maxUnavailablePerRack, batches, pauseAfterBatches, approval, maxFailed, haltOnOutsideFailures, bakeSeconds, healthCheck, maintenanceWindows };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as SessionControls;
}

/** From the session's creation to the instant it reached COMPLETE. */
export function makespanSeconds(session: UpgradeSession): number | undefined {
  if (session.progress.stage !== 'COMPLETE') return undefined;
  return (session.progress.stageStartedAt - Date.parse(session.createdAt)) / 1000;
}

export async function buildSessionReport(store: SessionStore, session: UpgradeSession): Promise<SessionReport> {
  const [messages, plan, wlmNames, records] = await Promise.all([
    store.listMessages(session.upgradeId),
    session.planTaken ? store.getPlanSlice(session.upgradeId, 0, session.nodeCount) : Promise.resolve([]),
    session.planTaken ? store.getPlanWlmNames(session.upgradeId, 0, session.nodeCount) : Promise.resolve([]),
    store.listNodes(session.upgradeId),
  ]);
  const byName = new Map(records.map((r) => [r.name, r]));
  const counts: Record<NodeStatus, number> = { NOT_STARTED: 0, IN_PROGRESS: 0, UPGRADED: 0, FAILED: 0 };
  const nodes: Record<string, NodeReport> = {};
  plan.forEach((name, i) => {
    const record = byName.get(name);
    const status = record?.status ?? 'NOT_STARTED';
    counts[status]++;
    const wlmName = wlmNames[i];
    nodes[name] = { status, ...(record?.reason ? { reason: record.reason } : {}), ...(wlmName && wlmName !== name ? { wlmName } : {}) };
  });
  return {
    upgradeId: session.upgradeId,
    kind: session.kind,
    state: session.state,
    completed: session.completed,
    startingLabel: session.startingLabel,
    upgradingLabel: session.upgradingLabel,
    failedLabel: session.failedLabel,
    upgradeStepSize: session.upgradeStepSize,
    upgradeTemplateId: session.upgradeTemplateId,
    workloadManagerType: session.workloadManagerType,
    quiesceTimeoutSeconds: session.quiesceTimeoutSeconds,
    bootTimeoutSeconds: session.bootTimeoutSeconds,
    wlmReturnTimeoutSeconds: session.wlmReturnTimeoutSeconds,
    pollIntervalSeconds: session.pollIntervalSeconds,
    createdAt: session.createdAt,
    stepCount: session.stepCount,
    controls: controlsOf(session),
    ...(makespanSeconds(session) !== undefined ? { makespanSeconds: makespanSeconds(session)! } : {}),
    ...(session.progress.window?.halted ? { haltedReason: session.progress.window.halted.reason } : {}),
    ...(session.operator?.paused ? { paused: true } : {}),
    ...(session.progress.window?.waiting && !session.completed ? { waiting: session.progress.window.waiting } : {}),
    ...(session.progress.window?.awaitingApproval !== undefined && session.state === 'UPDATING' && !session.operator?.approvedWaves?.includes(session.progress.window.awaitingApproval)
      ? { awaitingApprovalOfBatch: session.progress.window.awaitingApproval + 1 }
      : {}),
    progress: { step: session.progress.step, stage: session.progress.stage },
    counts,
    messages,
    nodes,
  };
}
