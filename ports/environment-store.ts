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
 * in exactly one environment at every point and moves with one conditional write. Names and site
 * nodes are claimed the same way: of concurrent registrations or clones wanting one name or one site
 * node, exactly one gets it; a claim left by a crash is taken over once its lease ran out.
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
   * Registers an environment with its nodes (POST /environments): its name, each site node (by name)
   * and each node id claimed with a conditional put, so a name, a site node or a node another
   * environment holds is never taken (ResourceConflictError naming each; what this registration wrote
   * is given back). Readers see it only once all of it holds. 'unchanged' when all of it was stored already.
   */
  addEnvironment(environment: Environment): Promise<'created' | 'unchanged'>;
  /**
   * Claims the upgrade relation of `draft.original_cluster_id` and the seed's name, and stores the seed
   * under a new id. Of concurrent creates for one original exactly one wins (the others get
   * UpgradeNotAllowedError); of concurrent ones for one name, too (ResourceConflictError naming `name`).
   */
  createSeed(draft: SeedDraft): Promise<Environment>;
  /**
   * Replaces an environment's own fields (name, status, attributes) read at `revision`; StaleWriteError
   * if it changed since; a new name is claimed first (ResourceConflictError if another has it). A node
   * list it carries is ignored: nodes move with moveNode only.
   */
  replaceEnvironment(environment: EnvironmentFields | Environment, revision: number): Promise<void>;
  /**
   * Removes an environment (Fuel's DELETE /clusters/{id}): its nodes leave it (their site nodes and ids
   * can be registered again), its name and upgrade relations are released. EnvironmentResourceNotFoundError
   * for an unknown one. Marked first: a crash midway leaves it unlisted and its claims free, and a delete
   * again finishes it.
   */
  deleteEnvironment(id: number): Promise<void>;
}
