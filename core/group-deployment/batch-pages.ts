/**
 * How many batches one child execution (a page of run-node-batches) may run. The page's history
 * follows from its states (core/history-events.ts) and from the longest a batch can poll (the poll
 * schedule), so the page size keeps every page's execution below the budget whatever the timeout.
 */
import { HISTORY_EVENTS } from '../history-events';
import { maxPolls, type PollSchedule } from './poll-schedule';

/** History events one page may use: the quota is 25,000, the rest is margin. */
export const PAGE_HISTORY_BUDGET = 20_000;

const { execution, simpleState, mapState, mapIteration, task } = HISTORY_EVENTS;

/**
 * History events of a page of `batches` batches polling `polls` times each: List Batches (Pass),
 * Run Batches (Map); per batch an iteration, Start Batch, Batch Finished (Choice), per poll Wait +
 * Check Batch + Choice, and Batch Done.
 */
export function pageHistoryEvents(batches: number, polls: number): number {
  const perPoll = simpleState + task + simpleState;
  const perBatch = mapIteration + task + simpleState + polls * perPoll + simpleState;
  return execution + simpleState + mapState + batches * perBatch;
}

export function batchesPerPage(timeoutSeconds: number, schedule: PollSchedule, limit: number): number {
  const polls = maxPolls(timeoutSeconds, schedule);
  const perBatch = pageHistoryEvents(1, polls) - pageHistoryEvents(0, polls);
  return Math.max(1, Math.min(limit, Math.floor((PAGE_HISTORY_BUDGET - pageHistoryEvents(0, polls)) / perBatch)));
}
