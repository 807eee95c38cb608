/**
 * Per-node leased locks shared by every workflow of one store (rolling upgrades, group
 * deployments, task runs, environment upgrades through their rolling upgrades), in the manner of
 * the DynamoDB lock client: an owner, a lease, and a fencing token bumped on every acquisition.
 * Single-item conditional writes only: "all or none" is done by giving back what was taken.
 */
export interface NodeLockStore {
  /**
   * Takes the lock of each node for `owner` with a lease of `leaseSeconds` (default: the store's):
   * a free node, one `owner` already holds, or one whose lease ran out (a takeover). Every
   * acquisition bumps the node's fencing token. Returns the nodes held by someone else under a
   * live lease, with their owner. Partial success is possible: callers that want all-or-nothing
   * release what they took.
   */
  tryLockNodes(owner: string, nodes: readonly string[], leaseSeconds?: number): Promise<Map<string, string>>;
  /**
   * The heartbeat, and the check before acting on a node: extends the lease of each lock `owner`
   * holds with the given fencing token (node → token). Returns the locks lost (another owner or a
   * newer token, or no lock at all), with the current lock if any.
   */
  renewNodeLocks(owner: string, held: ReadonlyMap<string, number>, leaseSeconds?: number): Promise<Map<string, NodeLock | undefined>>;
  /** Releases the locks `owner` holds on these nodes; others' locks are left alone. */
  releaseNodeLocks(owner: string, nodes: readonly string[]): Promise<void>;
  /** Owner of each locked node among these (expired leases included: the item is there until taken over or released). */
  getLockOwners(nodes: readonly string[]): Promise<Map<string, string>>;
  /** The lock of each locked node among these: owner, lease end, fencing token. */
  getNodeLocks(nodes: readonly string[]): Promise<Map<string, NodeLock>>;
  /**
   * Which of these ids name a run of this store (an upgrade, a deployment, a task run or an
   * environment upgrade): a claim the site shows for any other id was made by another control plane.
   */
  knownRuns(ids: readonly string[]): Promise<Set<string>>;
}

/** A node's lock, in the manner of the DynamoDB lock client: who holds it, until when, and its fencing token. */
export interface NodeLock {
  /** The session id that holds it. */
  owner: string;
  /** Epoch ms (the store's clock) after which another session may take it over. */
  leaseExpiresAt: number;
  /** Bumped on every acquisition: a node-changing call is made only with the token of the current holder. */
  fencingToken: number;
}
