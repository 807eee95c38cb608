/**
 * The deployment strategy as the domain uses it: Shipyard's DeploymentStrategy groups after
 * parsing, with labels normalised to key/value pairs and absent selector criteria as empty lists.
 */

/** A node label criterion; matches a node whose `labels[key]` equals `value`. */
export interface NodeLabel {
  key: string;
  value: string;
}

/** One selector: its criteria are intersected; an empty criterion is ignored; no criteria selects all nodes. */
export interface GroupSelector {
  nodeNames: readonly string[];
  nodeLabels: readonly NodeLabel[];
  nodeTags: readonly string[];
  rackNames: readonly string[];
}

/** Each criterion present must hold for the group to succeed a phase; none present always succeeds. */
export interface SuccessCriteria {
  percentSuccessfulNodes?: number;
  minimumSuccessfulNodes?: number;
  maximumFailedNodes?: number;
}

/**
 * How many of a group's nodes are handed to the provisioner at once (Fuel's granular-deployment
 * `strategy`): one at a time, `amount` at a time, or all at once when `amount` is absent.
 */
export type NodeConcurrency = { type: 'one_by_one' } | { type: 'parallel'; amount?: number };

export interface StrategyGroup {
  name: string;
  /** A critical group that fails makes the whole deployment fail (after every group was handled). */
  critical: boolean;
  dependsOn: readonly string[];
  /** The group's nodes are the union of its selectors; an empty list selects all nodes. */
  selectors: readonly GroupSelector[];
  successCriteria?: SuccessCriteria;
  concurrency: NodeConcurrency;
}

export interface DeploymentStrategy {
  /** In document order, which breaks ties in the deployment order. */
  groups: readonly StrategyGroup[];
}
