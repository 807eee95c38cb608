import { DETAIL_TYPES, statusEvent, type StatusEvent } from '../../../core/events/status-events';
import type { Progress, UpgradeSession, WindowProgress } from '../../../core/rolling-upgrade/session';

/**
 * Mode window's batch events from one ROLLING increment, from the window's progress before and after
 * it and the plan's records after it: each batch (wave) it opened, each it closed, and a batch that
 * now waits for an operator's approval. Ids name the batch (waves only move on), so a retried
 * increment publishes the same ones again.
 */
export function windowEvents(session: UpgradeSession, beforeProgress: Progress, after: Progress, at: string): StatusEvent[] {
  const before = beforeProgress.window;
  const common = { kind: 'upgrade' as const, sessionId: session.upgradeId, at };
  const from = before?.wave ?? -1;
  const to = after.window?.wave ?? from;
  const events: StatusEvent[] = [];
  const lastClosed = closedThrough(after.window, after.stage !== 'ROLLING');
  for (let wave = Math.max(closedThrough(before, false) + 1, 0); wave <= lastClosed; wave++) {
    // The closing wave's nodes: the counts now less those when it opened (both on the session item).
    // Only the current wave can close here (the one before closed when this one opened).
    const zero = { upgraded: 0, failed: 0 };
    const [end, start] = wave === from ? [after.counts ?? zero, before?.waveStartCounts ?? zero] : [zero, zero];
    const upgraded = end.upgraded - start.upgraded;
    const failed = end.failed - start.failed;
    events.push(statusEvent(DETAIL_TYPES.batchFinished, { ...common, batch: wave + 1, upgraded, failed }, `batch-${wave + 1}`));
  }
  const awaiting = after.window?.awaitingApproval;
  if (awaiting !== undefined && awaiting !== before?.awaitingApproval) {
    events.push(statusEvent(DETAIL_TYPES.batchAwaitingApproval, { ...common, batch: awaiting + 1 }, `batch-${awaiting + 1}`));
  }
  for (let wave = from + 1; wave <= to; wave++) events.push(statusEvent(DETAIL_TYPES.batchStarted, { ...common, batch: wave + 1 }, `batch-${wave + 1}`));
  return events;
}

/**
 * The last wave that is over: every earlier one (wave k+1 opens only once nothing of wave k is in
 * flight), and the current one once the window waits at its end (baking, or for the approval of the
 * next) or has left ROLLING.
 */
function closedThrough(window: WindowProgress | undefined, ended: boolean): number {
  if (!window) return -1;
  const atBoundary = ended || window.waiting === 'bake' || window.awaitingApproval === window.wave + 1;
  return atBoundary ? window.wave : window.wave - 1;
}
