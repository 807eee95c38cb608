/**
 * How many batches one child execution may run. A batch costs 11 history events plus 9 for each
 * poll (Wait, Check Batch, Choice), and its polls double from the poll interval up to a cap until
 * the phase timeout; so the page size follows from the longest a batch can poll, keeping every
 * page's execution below the history budget whatever the timeout.
 */

/** History events one page may use: 25,000 is the hard quota, the rest is margin. */
export const PAGE_HISTORY_BUDGET = 20_000;
const EVENTS_PER_BATCH = 11;
const EVENTS_PER_POLL = 9;
const EVENTS_PER_PAGE = 8;

/** The most polls a batch makes before its timeout, with waits doubling from `pollSeconds` up to `maxPollSeconds`. */
export function maxPolls(timeoutSeconds: number, pollSeconds: number, maxPollSeconds: number): number {
  let waited = 0;
  let wait = pollSeconds;
  let polls = 0;
  while (waited < timeoutSeconds) {
    waited += Math.min(wait, maxPollSeconds);
    wait *= 2;
    polls++;
  }
  return polls;
}

export function batchesPerPage(timeoutSeconds: number, pollSeconds: number, maxPollSeconds: number, limit: number): number {
  const perBatch = EVENTS_PER_BATCH + EVENTS_PER_POLL * maxPolls(timeoutSeconds, pollSeconds, maxPollSeconds);
  return Math.max(1, Math.min(limit, Math.floor((PAGE_HISTORY_BUDGET - EVENTS_PER_PAGE) / perBatch)));
}
