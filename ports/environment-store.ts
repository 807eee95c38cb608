import type { Environment, EnvironmentFields, EnvironmentNode, Release, SeedDraft } from '../core/environments';

/** An environment as stored, with the revision a conditional replace expects. Its nodes are derived from their ownership. */
export interface StoredEnvironment {
  environment: Environment;
  revision: number;
}

/** A node and the one environment that holds it. */
export interface NodeOwnership {
  node: EnvironmentNode;
  clusterId: number;
}

/**
 * Fuel's releases and environments, and the 1:1 upgrade relation between an environment and its
 * upgrade seed. Single-item conditional writes only (no transactions): each node has one ownership
 * record naming its environment, and an environment's node list is derived from them, so a node is
 * in exactly one environment at every point and moves with one conditional write.
 */
export interface EnvironmentStore {
  listReleases(): Promise<Release[]>;
  getRelease(id: number): Promise<Release | undefined>;
  listEnvironments(): Promise<Environment[]>;
  getEnvironment(id: number): Promise<StoredEnvironment | undefined>;
  /** Node `nodeId` and the environment that holds it, if the store knows the node. */
  getNode(nodeId: number): Promise<NodeOwnership | undefined>;
  /**
   * Moves node `nodeId` from environment `from` to environment `to` if it is still in `from`
   * (StaleWriteError if it is not), in one conditional write: never in both, never in neither.
   */
  moveNode(nodeId: number, from: number, to: number): Promise<EnvironmentNode>;
  /** The seed of `originalId` per the upgrade relation, if it has one. */
  seedOf(originalId: number): Promise<number | undefined>;
  /**
   * Adds what a site declares and the store lacks; what is stored already is kept (a data
   * directory reopened keeps the seeds and assignments made through the API).
   */
  seed(site: { releases: readonly Release[]; environments: readonly Environment[] }): Promise<void>;
  /**
   * Registers a release (POST /releases): 'created', or 'unchanged' when the same release is stored;
   * ResourceConflictError when another is stored under its id.
   */
  addRelease(release: Release): Promise<'created' | 'unchanged'>;
  /**
   * Registers an environment with its nodes (POST /environments): each item a conditional put, so a
   * node another environment holds is never taken (ResourceConflictError naming it; what was written
   * stays, and registering the same again completes it). 'unchanged' when all of it was stored already.
   */
  addEnvironment(environment: Environment): Promise<'created' | 'unchanged'>;
  /**
   * Claims the upgrade relation of `draft.original_cluster_id` and stores the seed under a new id.
   * Of concurrent creates for one original exactly one wins; the others get UpgradeNotAllowedError.
   */
  createSeed(draft: SeedDraft): Promise<Environment>;
  /**
   * Replaces an environment's own fields (name, status, attributes) read at `revision`; StaleWriteError
   * if it changed since. A node list it carries is ignored: nodes move with moveNode only.
   */
  replaceEnvironment(environment: EnvironmentFields | Environment, revision: number): Promise<void>;
}
