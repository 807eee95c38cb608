import type { Environment, Release, SeedDraft } from '../core/environments';

/** An environment as stored, with the revision a conditional replace expects. */
export interface StoredEnvironment {
  environment: Environment;
  revision: number;
}

/**
 * Fuel's releases and environments, and the 1:1 upgrade relation between an environment and its
 * upgrade seed. Single-item conditional writes only (no transactions).
 */
export interface EnvironmentStore {
  listReleases(): Promise<Release[]>;
  getRelease(id: number): Promise<Release | undefined>;
  listEnvironments(): Promise<Environment[]>;
  getEnvironment(id: number): Promise<StoredEnvironment | undefined>;
  /** The environment that holds node `nodeId`, if any does. */
  findNode(nodeId: number): Promise<Environment | undefined>;
  /** The seed of `originalId` per the upgrade relation, if it has one. */
  seedOf(originalId: number): Promise<number | undefined>;
  /**
   * Adds what a site declares and the store lacks; what is stored already is kept (a data
   * directory reopened keeps the seeds and assignments made through the API).
   */
  seed(site: { releases: readonly Release[]; environments: readonly Environment[] }): Promise<void>;
  /**
   * Claims the upgrade relation of `draft.original_cluster_id` and stores the seed under a new id.
   * Of concurrent creates for one original exactly one wins; the others get UpgradeNotAllowedError.
   */
  createSeed(draft: SeedDraft): Promise<Environment>;
  /** Replaces an environment read at `revision`; StaleWriteError if it changed since. */
  replaceEnvironment(environment: Environment, revision: number): Promise<void>;
}
