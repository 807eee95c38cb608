/**
 * What a command-driven site connector must remember between activity invocations: slurm-reboot's
 * boot sessions (their nodes and when the reboot was asked for), the command provisioner's
 * actions (their command invocation, then each node's outcome) and the slurm inventory's groups
 * (the members it gave a feature, which Slurm forgets on reconfigure). A deployed stack runs each activity
 * in its own Lambda invocation, maybe in a fresh container, so this lives in the rollout table, not
 * in process memory.
 */

/** The connectors that keep records; each has its own key space. */
export type ConnectorStateKind = 'slurm-reboot' | 'command-provisioner' | 'slurm-inventory';

/** A connector's records, by the name its caller chose (a boot session's or an action's name). */
export interface ConnectorRecords<T extends { name: string }> {
  get(name: string): Promise<T | undefined>;
  /**
   * Stores a new record unless one of that name exists (a retried or concurrent request): returns
   * the stored record, and whether it is the one given.
   */
  create(record: T): Promise<{ record: T; created: boolean }>;
  /** Replaces an existing record (throws when there is none: it was never created). */
  update(record: T): Promise<void>;
}

export interface ConnectorState {
  records<T extends { name: string }>(kind: ConnectorStateKind): ConnectorRecords<T>;
}
