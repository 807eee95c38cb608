/**
 * When a batch's site action is polled: first after the poll interval, then at waits doubling from
 * it up to a cap, never past the phase timeout, at least a second apart. Start/Check Batch take
 * their waits from here and the pages are sized by the same schedule.
 */
export interface PollSchedule {
  pollIntervalSeconds: number;
  maxPollSeconds: number;
}

/** Seconds of wait number `wait` (0: after the action starts; n: after its n-th poll). */
export function pollWaitSeconds(schedule: PollSchedule, wait: number, untilTimeoutSeconds = Infinity): number {
  if (wait === 0) return schedule.pollIntervalSeconds;
  const backoff = Math.min(schedule.pollIntervalSeconds * 2 ** wait, schedule.maxPollSeconds);
  return Math.max(1, Math.min(backoff, untilTimeoutSeconds));
}

/** The most polls a batch makes before its phase timeout: the last one comes at the timeout. */
export function maxPolls(timeoutSeconds: number, schedule: PollSchedule): number {
  let elapsed = 0;
  let polls = 0;
  while (elapsed < timeoutSeconds) {
    elapsed += pollWaitSeconds(schedule, polls, Math.ceil(timeoutSeconds - elapsed));
    polls++;
  }
  return polls;
}
