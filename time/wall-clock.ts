/** The host's date and time, as schedules fire on it (tests give one they move by hand). */
export interface WallClock {
  /** Epoch ms. */
  now(): number;
  /** Resolves once `ms` have passed, or early once `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** setTimeout's longest delay (about 24.8 days): longer sleeps are taken in parts. */
const LONGEST_TIMEOUT_MS = 2 ** 31 - 1;

export const SYSTEM_WALL_CLOCK: WallClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, Math.min(Math.max(0, ms), LONGEST_TIMEOUT_MS));
      signal.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
    }),
};
