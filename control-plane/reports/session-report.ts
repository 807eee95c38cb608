import {
  FailureReason,
  isSessionSettled,
  type NodeRecord,
  type NodeStatus,
  type Progress,
  type SessionState,
  type UpgradeSession,
} from '../../core/rolling-upgrade/session';
import { livePhase, livePhaseSince, outOfService, type LivePhase } from '../../core/rolling-upgrade/live-phase';
import { UPGRADE_CONTROL_KEYS, type UpgradeControls } from '../../core/rolling-upgrade/upgrade-request';
import type { SessionStore } from '../../ports/session-store';
import { stepNumber } from '../../core/rolling-upgrade/step-plan';
import { showInstant, type RunClock, type ShownInstant } from '../../core/time-format';

export interface NodeReport {
  status: NodeStatus;
  reason?: string;
  /** The workload manager's name of the node where it differs from the inventory's (CSM: `nid000006` for `x3000c0s19b1n0`). */
  wlmName?: string;
  /** Where it is now (core/rolling-upgrade/live-phase.ts): waiting, draining, quiet, booting, returning, checking, back, failed, ... */
  phase: LivePhase;
  /** When it entered that phase (ISO, the session's clock: see the report's timeBase). */
  since?: string;
  /** Out of service from, and to (ISO, the session's clock): quiet or rebooting until back or failed. */
  outOfService?: { from: string; to?: string };
  /** Mode window: the wave (batch) it started in, 1-based. */
  wave?: number;
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
  /** On simulated time: the wall-clock instant it was created. */
  wallCreatedAt?: string;
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
  /** Where it is; `stop`: a stopped session, where a resume carries on. */
  progress: Pick<Progress, 'step' | 'stage' | 'stop'>;
  counts: Record<NodeStatus, number>;
  /** Nodes by live phase. */
  phases: Partial<Record<LivePhase, number>>;
  /**
   * What the instants are: `wall-clock` dates, or `simulated` instants of a simulated site's clock
   * (not dates: shown as offsets from the session's start).
   */
  timeBase: 'wall-clock' | 'simulated';
  /** Lock-step cancels: failed nodes that the deletion rules failed (most never started). */
  failedByCancel?: number;
  /** Mode window: the waves (batches) that opened, 1-based, with what each did. */
  waves?: { wave: number; nodes: number; upgraded: number; failed: number }[];
  /** When it should end, the plan made again over the nodes left (ISO, the session's clock), while it runs. */
  estimate?: { endsAt: string; basis: string };
  /** CRUS's messages (text only). */
  messages: string[];
  /** The messages with the instant each was posted (ISO, the session's clock). */
  messageLog: { at: string; text: string }[];
  nodes: Record<string, NodeReport>;
}

/**
 * A session report as JSON shows it (`--json`, the REST API): its instants as core/time-format.ts
 * shows them, ISO dates on the wall clock and `{secondsFromStart, timeBase: 'simulated'}` on
 * simulated time (counted from the session's start: its `createdAt` is 0), never a simulated date.
 */
export type SessionReportJson = Omit<SessionReport, 'createdAt' | 'nodes' | 'estimate' | 'messageLog'> & {
  createdAt: ShownInstant;
  nodes: Record<string, Omit<NodeReport, 'since' | 'outOfService'> & { since?: ShownInstant; outOfService?: { from: ShownInstant; to?: ShownInstant } }>;
  estimate?: { endsAt: ShownInstant; basis: string };
  messageLog: { at: ShownInstant; text: string }[];
};

/** The report's clock: its instants are on it, simulated ones counted from the session's start. */
export const reportClock = (report: Pick<SessionReport, 'timeBase' | 'createdAt'>): RunClock => ({ timeBase: report.timeBase, startedAt: report.createdAt });

export function sessionReportJson(report: SessionReport): SessionReportJson {
  const clock = reportClock(report);
  const shown = (at: string) => showInstant(at, clock);
  const { createdAt, nodes, estimate, messageLog, progress, ...rest } = report;
  const { step, stop, ...where } = progress;
  return {
    ...rest,
    // Steps counted from 1, as everywhere shown (the report keeps the stored index, 0-based).
    progress: {
      ...where,
      step: stepNumber(step, report.stepCount),
      ...(stop ? { stop: { ...stop, step: stepNumber(stop.step, report.stepCount) } } : {}),
    },
    createdAt: shown(createdAt),
    ...(estimate ? { estimate: { endsAt: shown(estimate.endsAt), basis: estimate.basis } } : {}),
    messageLog: messageLog.map((m) => ({ at: shown(m.at), text: m.text })),
    nodes: Object.fromEntries(
      Object.entries(nodes).map(([name, { since, outOfService: out, ...node }]) => [
        name,
        {
          ...node,
          ...(since ? { since: shown(since) } : {}),
          ...(out ? { outOfService: { from: shown(out.from), ...(out.to ? { to: shown(out.to) } : {}) } } : {}),
        },
      ]),
    ),
  };
}

/** The session's scheduling controls, as its request gave them. */
export type SessionControls = UpgradeControls;

function controlsOf(session: UpgradeSession): SessionControls {
  // reserveSlots is left out of the report's controls, as it always was.
  const shown = UPGRADE_CONTROL_KEYS.filter((key) => key !== 'reserveSlots' && session[key] !== undefined);
  return Object.fromEntries(shown.map((key) => [key, session[key]])) as SessionControls;
}

/**
 * From the session's creation to the instant it reached COMPLETE. Never negative: a session resumed
 * on a fresh simulated clock from before its start (an older data directory) reports 0, not minus.
 */
export function makespanSeconds(session: UpgradeSession): number | undefined {
  if (session.progress.stage !== 'COMPLETE') return undefined;
  return Math.max(0, (session.progress.stageStartedAt - Date.parse(session.createdAt)) / 1000);
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

export async function buildSessionReport(store: SessionStore, session: UpgradeSession): Promise<SessionReport> {
  const [messageLog, plan, wlmNames, records] = await Promise.all([
    store.messages.listTimed(session.upgradeId),
    session.planTaken ? store.getPlanSlice(session.upgradeId, 0, session.nodeCount) : Promise.resolve([]),
    session.planTaken ? store.getPlanWlmNames(session.upgradeId, 0, session.nodeCount) : Promise.resolve([]),
    store.listNodes(session.upgradeId),
  ]);
  return sessionReportOf(session, { messageLog, plan, wlmNames, records });
}

/** What a report is made of besides the session item: messages, the planned nodes (with their workload-manager names, parallel), their records. */
export interface SessionReportReads {
  messageLog: { at: string; text: string }[];
  plan: readonly string[];
  wlmNames: readonly (string | undefined)[];
  records: readonly NodeRecord[];
}

/** The report of `session` over the nodes and messages read (all of them for `rollout session get`; the live view reads fewer: live-session.ts). */
export function sessionReportOf(session: UpgradeSession, { messageLog, plan, wlmNames, records }: SessionReportReads): SessionReport {
  const ended = isSessionSettled(session.state);
  const { counts, phases, nodes, waves, failedByCancel } = reportNodes(plan, wlmNames, records, ended);
  const estimate = session.progress.estimate;
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
    ...(session.wallCreatedAt ? { wallCreatedAt: session.wallCreatedAt } : {}),
    stepCount: session.stepCount,
    controls: controlsOf(session),
    ...(makespanSeconds(session) !== undefined ? { makespanSeconds: makespanSeconds(session)! } : {}),
    ...((session.progress.window?.halted ?? session.progress.halted)
      ? { haltedReason: (session.progress.window?.halted ?? session.progress.halted)!.reason }
      : {}),
    ...(session.operator?.paused ? { paused: true } : {}),
    ...(session.progress.window?.waiting && !session.completed ? { waiting: session.progress.window.waiting } : {}),
    ...(session.progress.window?.awaitingApproval !== undefined &&
    session.state === 'UPDATING' &&
    !session.operator?.approvedWaves?.includes(session.progress.window.awaitingApproval)
      ? { awaitingApprovalOfBatch: session.progress.window.awaitingApproval + 1 }
      : {}),
    progress: { step: session.progress.step, stage: session.progress.stage, ...(session.progress.stop ? { stop: session.progress.stop } : {}) },
    counts,
    phases,
    timeBase: session.simulatedTime ? 'simulated' : 'wall-clock',
    ...(failedByCancel > 0 ? { failedByCancel } : {}),
    ...(session.mode === 'window' ? { waves } : {}),
    ...(estimate && !ended ? { estimate: { endsAt: iso(estimate.endsAt)!, basis: estimate.basis } } : {}),
    messages: messageLog.map((m) => m.text),
    messageLog,
    nodes,
  };
}

/** Each planned node's report (its status, live phase and since when, time out of service, batch), with the counts by status, phase and batch. */
function reportNodes(plan: readonly string[], wlmNames: readonly (string | undefined)[], records: readonly NodeRecord[], ended: boolean) {
  const byName = new Map(records.map((r) => [r.name, r]));
  const counts: Record<NodeStatus, number> = { NOT_STARTED: 0, IN_PROGRESS: 0, UPGRADED: 0, FAILED: 0 };
  const phases: Partial<Record<LivePhase, number>> = {};
  const nodes: Record<string, NodeReport> = {};
  const waves = new Map<number, { wave: number; nodes: number; upgraded: number; failed: number }>();
  let failedByCancel = 0;
  plan.forEach((name, i) => {
    const record = byName.get(name);
    const status = record?.status ?? 'NOT_STARTED';
    counts[status]++;
    const phase = livePhase(record, ended);
    phases[phase] = (phases[phase] ?? 0) + 1;
    const since = iso(livePhaseSince(record));
    const out = record && outOfService(record);
    const wave = record?.op?.wave;
    nodes[name] = {
      status,
      ...(record?.reason ? { reason: record.reason } : {}),
      ...(wlmNames[i] && wlmNames[i] !== name ? { wlmName: wlmNames[i] } : {}),
      phase,
      ...(since ? { since } : {}),
      ...(out ? { outOfService: { from: iso(out.from)!, ...(out.to !== undefined ? { to: iso(out.to)! } : {}) } } : {}),
      ...(wave !== undefined ? { wave: wave + 1 } : {}),
    };
    if (status === 'FAILED' && record?.reason === FailureReason.sessionDeleted) failedByCancel++;
    if (wave !== undefined) {
      const w = waves.get(wave) ?? { wave: wave + 1, nodes: 0, upgraded: 0, failed: 0 };
      w.nodes++;
      if (status === 'UPGRADED') w.upgraded++;
      if (status === 'FAILED') w.failed++;
      waves.set(wave, w);
    }
  });
  return { counts, phases, nodes, waves: [...waves.values()].sort((a, b) => a.wave - b.wave), failedByCancel };
}
