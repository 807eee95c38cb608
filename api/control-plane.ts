import type { EnvironmentStore } from '../ports/environment-store';
import type { RolloutSessions, StartedRun, WorkflowName } from '../engine/runtime';

/**
 * What the API needs of a control plane: the engine facade's run and its session reads and cancel.
 * The embedded runtime is one; the deployed Lambda builds one over Step Functions and the table.
 */
export interface ApiControlPlane extends Pick<RolloutSessions, 'sessions' | 'session' | 'cancel'> {
  run(workflow: WorkflowName, input: unknown): Promise<Pick<StartedRun, 'id' | 'kind' | 'executionArn'>>;
}

export interface ApiDependencies {
  controlPlane: ApiControlPlane;
  environments: EnvironmentStore;
}
