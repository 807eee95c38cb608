import { DynamoDbDeploymentStore } from '../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbRunRecords } from '../adapters/dynamodb/dynamodb-run-records';
import { DynamoDbSessionStore } from '../adapters/dynamodb/dynamodb-session-store';
import { DynamoDbTaskRunStore } from '../adapters/dynamodb/dynamodb-task-run-store';
import type { SiteProfile } from '../core/site/site-profile';
import type { ConnectorState } from '../ports/connector-state';
import type { SiteDefinition } from '../simulator';
import { connectProfile } from './profile-connection';
import { openDataDir } from './data-dir';
import { EmbeddedRuntime } from './embedded-runtime';
import { ControlPlane } from '../control-plane/control-plane';
import { SfnExecutions } from '../control-plane/aws-client/sfn-executions';
import { SFNClient } from '@aws-sdk/client-sfn';
import { WORKFLOWS } from '../contracts';
import type { ExecutionMachine, Executions } from '../ports/executions';
import { localExecutionArn, localStateMachineArn } from './local-step-functions';
import { LOCAL_REGION } from './sfn-endpoint';

export { DEFAULT_TIME_SCALE } from './embedded-runtime';

/**
 * Where the site comes from: a simulated site definition (the simulator starts in-process) or,
 * with real connectors, a site profile (the runtime connects to the site instead).
 */
export type SiteSource =
  | { kind: 'simulated'; definition: SiteDefinition }
  /** `baseDir`: where the profile's relative paths (token files, a file inventory) are read from. */
  | { kind: 'profile'; profile: SiteProfile; baseDir: string };

export interface OpenRuntimeOptions {
  site: SiteSource;
  /** Keep sessions on disk here; in memory without it. */
  dataDir?: string;
  /**
   * Simulated seconds per real second (a simulated site only); without it the run is on virtual
   * time. A profile's site runs on the wall clock, or on the scaled clock its `simulatedTime` names.
   */
  timeScale?: number;
  /** Loopback port of the DynamoDB endpoint (`rollout serve --dynamodb-port`); any free port without it. */
  dynamoDbPort?: number;
}

/**
 * A control plane that runs workflows: today the embedded one, owning the data directory while it
 * runs. `rollout serve` (local/serve.ts) serves the very runtime this opens.
 */
export async function openRuntime(options: OpenRuntimeOptions): Promise<EmbeddedRuntime> {
  const { site } = options;
  const storage = { ...(options.dataDir ? { dataDir: options.dataDir } : {}), ...(options.dynamoDbPort ? { dynamoDbPort: options.dynamoDbPort } : {}) };
  if (site.kind === 'simulated') {
    return EmbeddedRuntime.start({ site: site.definition, ...(options.timeScale !== undefined ? { timeScale: options.timeScale } : {}), ...storage });
  }
  // Connected once per process: the CLI's checks before the run used this very connection.
  const connection = await connectProfile(site);
  const connect = async ({ connectorState }: { connectorState: ConnectorState }) => {
    connection.bindConnectorState(connectorState);
    return connection.site;
  };
  const { workloadManager } = site.profile;
  const siteEventSpool = workloadManager.type === 'scontrol' ? workloadManager.siteEvents?.spool : undefined;
  return EmbeddedRuntime.start({
    connectedSite: { connect, ...(connection.clock ? { clock: connection.clock } : {}), ...(siteEventSpool ? { siteEventSpool } : {}) },
    ...storage,
  });
}

/**
 * The control plane of a data directory, for a command that only reads, stops, cancels or gates: its
 * stores through the live owner's endpoint when a process holds it, else opened here for the command's
 * duration. Its executions are the owner's, through the Step Functions endpoint the owner serves
 * (`running` answers, and wakes reach its parked workflows, there); without such an owner nothing runs
 * workflows on the directory (ownerlessExecutions).
 */
export async function openSessions(options: { dataDir: string }): Promise<ControlPlane> {
  const data = await openDataDir({ dataDir: options.dataDir, runsWorkflows: false });
  const { tableName, client } = data.dynamoDb;
  const executions = data.stepFunctionsEndpoint
    ? new SfnExecutions({
        sfn: new SFNClient({ endpoint: data.stepFunctionsEndpoint, region: LOCAL_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
        // The owner's engine registers every machine under its contracts name (EmbeddedRuntime.start).
        stateMachines: localStateMachines(),
      })
    : ownerlessExecutions;
  return new ControlPlane({
    upgrades: new DynamoDbSessionStore({ tableName, client }),
    deployments: new DynamoDbDeploymentStore({ tableName, client }),
    taskRuns: new DynamoDbTaskRunStore({ tableName, client }),
    records: new DynamoDbRunRecords({ tableName, client }),
    executions,
    onClose: () => data.close(),
  });
}

/** The ARN each machine has on the embedded engine. */
function localStateMachines(): Record<ExecutionMachine, string> {
  return {
    rollingUpgrade: localStateMachineArn(WORKFLOWS.rollingUpgrade),
    groupDeployment: localStateMachineArn(WORKFLOWS.groupDeployment),
    taskGraph: localStateMachineArn(WORKFLOWS.taskGraph),
    environmentUpgrade: localStateMachineArn('EnvironmentUpgrade'),
  };
}

/**
 * A data directory that no live process running workflows owns: no execution runs (a cancel or stop
 * applies when the run is resumed), no task waits for a token, and nothing can be started here.
 */
const ownerlessExecutions: Executions = {
  start: () => Promise.reject(new Error('no process runs workflows on this data directory: start the run with --site or --site-config')),
  describe: () => Promise.resolve(undefined),
  list: () => Promise.resolve([]),
  ended: (executionArn) => Promise.reject(new Error(`Execution Does Not Exist: '${executionArn}'`)),
  stop: (executionArn) => Promise.reject(new Error(`Execution Does Not Exist: '${executionArn}'`)),
  sendTaskSuccess: () => Promise.resolve(false),
  sendTaskFailure: () => Promise.resolve(false),
  executionArn: (machine, name) => localExecutionArn(localStateMachines()[machine], name),
  close: () => undefined,
};
