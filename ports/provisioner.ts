/**
 * What group deployments need from the site's provisioner (Shipyard's Drydock role): run a
 * prepare or deploy action over some nodes and report each node's outcome.
 * Every method throws SiteServiceError (service 'provisioner') when the service fails (retryable).
 */

export type ProvisionAction = 'prepare' | 'deploy';

export type ProvisionNodeOutcome = 'pending' | 'running' | 'succeeded' | 'failed';

export interface ProvisionActionRequest {
  /** Unique, chosen by the caller: starting the same name again returns the existing action (idempotent). */
  name: string;
  action: ProvisionAction;
  nodes: readonly string[];
}

export interface ProvisionActionStatus {
  name: string;
  action: ProvisionAction;
  /** `complete` once every node has succeeded or failed; a hung node keeps it `running` (callers time out). */
  status: 'running' | 'complete';
  /** Per-node outcome of every node the action covers. */
  nodes: Record<string, ProvisionNodeOutcome>;
}

export interface Provisioner {
  /** Starts an action, or returns the existing one of the same name. */
  startAction(request: ProvisionActionRequest): Promise<ProvisionActionStatus>;
  /** Undefined when no action of that name exists. */
  getAction(name: string): Promise<ProvisionActionStatus | undefined>;
}
