import type { EnvironmentStore } from '../ports/environment-store';
import type { EnvironmentUpgradeStore } from '../ports/environment-upgrade-store';
import type { RunStartStore } from '../ports/run-start-store';
import type { Site } from '../ports/site';
import type { RolloutSessions, StartedRun, WorkflowName } from '../engine/runtime';

/**
 * What the API needs of a control plane: the engine facade's run and its session reads and cancel.
 * The embedded runtime is one; the deployed Lambda builds one over Step Functions and the table.
 */
export interface ApiControlPlane extends Pick<RolloutSessions, 'sessions' | 'session' | 'cancel' | 'gate' | 'stop' | 'status'> {
  run(workflow: WorkflowName, input: unknown): Promise<Pick<StartedRun, 'id' | 'kind' | 'executionArn'>>;
  /**
   * Starts the side-by-side environment upgrade (statemachines/environment-upgrade.asl.json) with
   * `{environmentId, request}` as the execution `executionName`.
   */
  startEnvironmentUpgrade(input: { environmentId: number; request: unknown }, executionName: string): Promise<{ id: string; executionArn: string }>;
  /** The session id the environment upgrade started as `executionName` gets (derived from its execution ARN, as its first activity derives it). */
  environmentUpgradeId(executionName: string): string;
  /** Removes an upgrade session that has ended (CRUS's DELETE of a finished session); see SessionStore.removeEndedSession. */
  removeSession(id: string): Promise<{ state: string }>;
  /** Removes a group deployment that has ended, by the same rule; see DeploymentStore.removeEndedDeployment. */
  removeDeployment(id: string): Promise<{ status: string }>;
  /** The control plane's clock (simulated time on the embedded default), epoch ms. */
  now(): number;
}

export interface ApiDependencies {
  controlPlane: ApiControlPlane;
  environments: EnvironmentStore;
  environmentUpgrades: EnvironmentUpgradeStore;
  /** Runs started and not yet recorded, or refused by their first state: their ids answer (never a 404) until their records exist. */
  runStarts: RunStartStore;
  /**
   * The site, for the checks a request needs before it is answered (a boot template, node names,
   * groups). Without it, or while it fails, those checks are the workflow's: its session says why.
   */
  site?: Pick<Site, 'bootService' | 'inventory'>;
}
