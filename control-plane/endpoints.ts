/**
 * What a served control plane announces: the first line of `rollout serve`, and the answer of its
 * discovery route (`GET /rollout/v1/endpoints`). `tableName` tells a client where the sessions are.
 */
export interface ControlPlaneEndpoints {
  stepFunctionsEndpoint: string;
  dynamodbEndpoint: string;
  region: string;
  tableName: string;
  /** `taskGraph` is absent on a control plane from before task graphs. */
  stateMachines: { rollingUpgrade: string; groupDeployment: string; taskGraph?: string };
  /** The REST API (sessions, deployments, environments; api/): `rollout serve` serves it beside the endpoint. */
  apiEndpoint?: string;
  /** EventBridge Scheduler-compatible endpoint (absent on AWS: the SDK's own), the group and the role schedules use. */
  schedulerEndpoint?: string;
  scheduleGroup?: string;
  schedulerRoleArn?: string;
}

export const DISCOVERY_PATH = '/rollout/v1/endpoints';
