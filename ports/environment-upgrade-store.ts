import type { EnvironmentUpgradeSession } from '../core/environments';

/** A session as stored, with the revision a conditional save expects. */
export interface StoredEnvironmentUpgrade {
  session: EnvironmentUpgradeSession;
  revision: number;
}

/**
 * The sessions of the side-by-side environment upgrade (POST /environments/{id}/upgrade), one item
 * each, and which session is upgrading each environment. Single-item conditional writes only.
 */
export interface EnvironmentUpgradeStore {
  /** Stores a new session, or returns the one already stored under its id (a retried open). */
  createUpgrade(session: EnvironmentUpgradeSession): Promise<StoredEnvironmentUpgrade>;
  getUpgrade(upgradeId: string): Promise<StoredEnvironmentUpgrade | undefined>;
  /** Newest first. */
  listUpgrades(): Promise<EnvironmentUpgradeSession[]>;
  /**
   * Records that an execution of generation `generation` runs the session (kept only if newer than the
   * stored one; apart from the revision, so that no save of a session read before it loses it).
   */
  noteGeneration(upgradeId: string, generation: number): Promise<void>;
  /** Replaces the session read at `revision`; StaleWriteError if it changed since (a cancel, another increment). */
  saveUpgrade(session: EnvironmentUpgradeSession, revision: number): Promise<void>;
  /** UPDATING → DELETING. Throws SessionNotFoundError or SessionNotCancellableError. */
  requestCancel(upgradeId: string): Promise<EnvironmentUpgradeSession>;
  /**
   * Claims environment `environmentId` for session `upgradeId`, unless a session that has not ended
   * holds it: then returns that session's id. One conditional write decides between concurrent claims.
   */
  claimEnvironment(environmentId: number, upgradeId: string): Promise<string | undefined>;
  /** Removes a session no workflow runs: the API's, when its claim on the environment was refused before any start. */
  deleteUpgrade(upgradeId: string): Promise<void>;
  /** The session upgrading `environmentId` now, if one that has not ended holds it. */
  activeUpgradeOf(environmentId: number): Promise<string | undefined>;
}
