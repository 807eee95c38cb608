import type { NodeRecord, NodeStatus, UpgradeSession } from '../../core/rolling-upgrade/session';
import { stepRange } from '../../core/rolling-upgrade/step-plan';
import type { SessionStore } from '../../ports/session-store';
import { sessionReportOf, type SessionReport } from './session-report';

/**
 * What the live view shows of an upgrade, read for each redraw (once a second): the session's report
 * over its nodes in flight alone, and the counts from the counters the run keeps on its item, not
 * from every node record. At 10,000 nodes `rollout session get` reads 10,000 records and every
 * message; this reads the nodes in flight (a lock-step step, a window's in-flight index), the plan
 * chunks they are in, and the newest messages.
 */
export type LiveSessionReport = Pick<
  SessionReport,
  | 'upgradeId'
  | 'state'
  | 'createdAt'
  | 'controls'
  | 'upgradeStepSize'
  | 'timeBase'
  | 'haltedReason'
  | 'paused'
  | 'waiting'
  | 'awaitingApprovalOfBatch'
  | 'counts'
  | 'waves'
  | 'messageLog'
  | 'nodes'
>;

/** The newest messages read: the live view searches them for the newest that names each node in flight (cli/live-state.ts). */
export const LIVE_MESSAGES = 200;

export async function buildLiveSessionReport(store: SessionStore, session: UpgradeSession): Promise<LiveSessionReport> {
  const positions = inFlightPositions(session);
  const [messageLog, inFlight] = await Promise.all([store.messages.recent(session.upgradeId, LIVE_MESSAGES), readPositions(store, session, positions)]);
  const { counts: _overInFlight, ...report } = sessionReportOf(session, { messageLog, ...inFlight });
  return { ...report, counts: countsOf(session, inFlight.records) };
}

/** Plan positions that may be in flight: a window's in-flight index, or a lock-step run's current step. */
function inFlightPositions(session: UpgradeSession): number[] {
  const { progress } = session;
  if (!session.planTaken || progress.stage === 'COMPLETE') return [];
  if (session.mode === 'window') return [...(progress.window?.inFlight ?? [])].sort((a, b) => a - b);
  if (progress.step >= session.stepCount) return [];
  const { start, end } = stepRange(progress.step, session.upgradeStepSize, session.nodeCount);
  return Array.from({ length: end - start }, (_, i) => start + i);
}

/** The names (both kinds) and records at `positions` (ascending): the plan chunks that hold them, then their records. */
async function readPositions(store: SessionStore, session: UpgradeSession, positions: readonly number[]) {
  if (positions.length === 0) return { plan: [], wlmNames: [], records: [] };
  const from = positions[0]!;
  const to = positions.at(-1)! + 1;
  const [names, wlm] = await Promise.all([store.getPlanSlice(session.upgradeId, from, to), store.getPlanWlmNames(session.upgradeId, from, to)]);
  const at = positions.flatMap((index) => (names[index - from] === undefined ? [] : [{ name: names[index - from]!, index }]));
  const records = await store.getNodes(session.upgradeId, at);
  return { plan: at.map((n) => n.name), wlmNames: at.map((n) => wlm[n.index - from]), records };
}

/**
 * Counts by status from the session's counters (Progress.counts: a window counts a node as it leaves
 * the in-flight index; lock-step counts a step as it ends) and the records in flight: in lock-step,
 * the current step's nodes that ended are not counted on the item until the step does. A node failed
 * before its step (outside the boot service's sets) counts as waiting until its step ends.
 */
function countsOf(session: UpgradeSession, inFlight: readonly NodeRecord[]): Record<NodeStatus, number> {
  const counted = session.progress.counts ?? { upgraded: 0, failed: 0 };
  const of = (status: NodeStatus) => inFlight.filter((record) => record.status === status).length;
  // A lock-step cancel counts the step's nodes as it fails them; a window's ended nodes have left its index.
  const stepNotCounted = session.mode !== 'window' && session.progress.stage !== 'CANCELLING';
  const upgraded = counted.upgraded + (stepNotCounted ? of('UPGRADED') : 0);
  const failed = counted.failed + (stepNotCounted ? of('FAILED') : 0);
  const inProgress = of('IN_PROGRESS');
  return { UPGRADED: upgraded, FAILED: failed, IN_PROGRESS: inProgress, NOT_STARTED: Math.max(0, session.nodeCount - upgraded - failed - inProgress) };
}
