import { randomUUID } from 'node:crypto';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbDeploymentStore } from '../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbSessionStore } from '../adapters/dynamodb/dynamodb-session-store';
import { DynamoDbTaskRunStore } from '../adapters/dynamodb/dynamodb-task-run-store';
import type { WorkflowName } from '../contracts';
import { executionArnOf } from '../core/environments';
import { idForExecution } from '../core/execution-id';
import type { ApiControlPlane } from './runtime';
import { wakeThroughSfn } from './operator-wake';
import { runKindOf } from './runtime';
import { StoreSessions } from './store-sessions';

export interface DeployedControlPlaneOptions {
  /** The stack's table (sessions, deployments, task runs). */
  tableName: string;
  client: DynamoDBDocumentClient;
  /** The state machines the REST API starts. */
  stateMachines: { rollingUpgrade: string; groupDeployment: string; environmentUpgrade: string };
  sfn?: SFNClient;
}

/**
 * The deployed control plane as the API sees it: sessions read and cancelled in the table (as any
 * observer of it does), workflows started with StartExecution under a fresh name.
 */
export function deployedControlPlane({ tableName, client, stateMachines, sfn = new SFNClient({}) }: DeployedControlPlaneOptions): ApiControlPlane {
  const sessionStore = new DynamoDbSessionStore({ tableName, client });
  const deploymentStore = new DynamoDbDeploymentStore({ tableName, client });
  // A cancel wakes a rolling upgrade parked for its operator (SendTaskSuccess with the token stored on the session).
  const reads = new StoreSessions({
    upgrades: sessionStore,
    deployments: deploymentStore,
    taskRuns: new DynamoDbTaskRunStore({ tableName, client }),
    running: true,
    wake: wakeThroughSfn(sfn),
  });
  // The REST API starts upgrades and deployments; task runs are started through Step Functions.
  const startable: Partial<Record<WorkflowName, string>> = { rollingUpgrade: stateMachines.rollingUpgrade, groupDeployment: stateMachines.groupDeployment };
  const start = async (stateMachineArn: string, input: unknown, name: string = randomUUID()) => {
    const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }));
    if (!executionArn) throw new Error('StartExecution answered without an executionArn');
    // As the first activity of each workflow derives it from $$.Execution.Id.
    return { id: idForExecution(executionArn), executionArn };
  };
  return {
    sessions: () => reads.sessions(),
    session: (id) => reads.session(id),
    cancel: (id) => reads.cancel(id),
    // Pause, unpause and approve wake a rolling upgrade parked for its operator the same way.
    gate: (id, action) => reads.gate(id, action),
    stop: (id) => reads.stop(id),
    status: (id) => reads.status(id),
    async run(workflow, input) {
      const stateMachineArn = startable[workflow];
      if (!stateMachineArn) throw new Error(`the REST API does not start ${workflow} workflows`);
      return { ...(await start(stateMachineArn, input)), kind: runKindOf(workflow) };
    },
    startEnvironmentUpgrade: (input, executionName) => start(stateMachines.environmentUpgrade, input, executionName),
    environmentUpgradeId: (executionName) => idForExecution(executionArnOf(stateMachines.environmentUpgrade, executionName)),
    now: () => Date.now(),
    removeSession: (id) => sessionStore.removeEnded(id),
    removeDeployment: (id) => deploymentStore.removeEnded(id),
  };
}
