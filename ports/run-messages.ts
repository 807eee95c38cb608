/**
 * A run's messages (an upgrade, a deployment, a task run): what it says to its operator as it
 * goes (a wait for another session's nodes, a site call that failed or timed out), oldest first.
 * Each run store exposes its run's messages as one `messages` object (ports/run-store.ts).
 */
export interface RunMessages {
  append(id: string, message: string): Promise<void>;
  /** Oldest first. */
  list(id: string): Promise<string[]>;
  /** Oldest first, each with the instant it was posted (ISO, the run's clock). */
  listTimed(id: string): Promise<{ at: string; text: string }[]>;
  /** The newest `limit` messages, oldest first, timed as listTimed's (one bounded read, for a live view). */
  recent(id: string, limit: number): Promise<{ at: string; text: string }[]>;
  /** The newest message (one read, for a progress display), undefined before the first. */
  latest(id: string): Promise<string | undefined>;
}
