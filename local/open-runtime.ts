import { DynamoDbDeploymentStore } from '../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbSessionStore } from '../adapters/dynamodb/dynamodb-session-store';
import { DynamoDbTaskRunStore } from '../adapters/dynamodb/dynamodb-task-run-store';
import type { SiteProfile } from '../core/site/site-profile';
import type { ConnectorState } from '../ports/connector-state';
import type { SiteDefinition } from '../simulator';
import { connectProfile } from './profile-connection';
import { openDataDir } from './data-dir';
import { EmbeddedRuntime } from './embedded-runtime';
import type { RolloutSessions } from '../control-plane/runtime';
import { StoreSessions } from '../control-plane/store-sessions';
import { SFNClient } from '@aws-sdk/client-sfn';
import { wakeThroughSfn } from '../control-plane/operator-wake';
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
}

/**
 * A control plane that runs workflows: today the embedded one, owning the data directory while it
 * runs. `rollout serve` (local/serve.ts) serves the very runtime this opens.
 */
export async function openRuntime(options: OpenRuntimeOptions): Promise<EmbeddedRuntime> {
  const { site } = options;
  const dataDir = options.dataDir ? { dataDir: options.dataDir } : {};
  if (site.kind === 'simulated') {
    return EmbeddedRuntime.start({ site: site.definition, ...(options.timeScale !== undefined ? { timeScale: options.timeScale } : {}), ...dataDir });
  }
  // Connected once per process: the CLI's checks before the run used this very connection.
  const connection = await connectProfile(site);
  const connect = async ({ connectorState }: { connectorState: ConnectorState }) => {
    connection.bindConnectorState(connectorState);
    return connection.site;
  };
  return EmbeddedRuntime.start({ connectedSite: { connect, ...(connection.clock ? { clock: connection.clock } : {}) }, ...dataDir });
}

/**
 * The sessions of a data directory, for a command that only reads or cancels: through the live
 * owner's endpoint when a process holds it, else opened here for the command's duration.
 */
export async function openSessions(options: { dataDir: string }): Promise<RolloutSessions> {
  const data = await openDataDir({ dataDir: options.dataDir, runsWorkflows: false });
  const { tableName, client } = data.dynamoDb;
  // The owner that runs the workflows serves Step Functions: approve, resume and cancel wake its parked executions there.
  const sfn = data.stepFunctionsEndpoint
    ? new SFNClient({ endpoint: data.stepFunctionsEndpoint, region: LOCAL_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } })
    : undefined;
  return new StoreSessions({
    upgrades: new DynamoDbSessionStore({ tableName, client }),
    deployments: new DynamoDbDeploymentStore({ tableName, client }),
    taskRuns: new DynamoDbTaskRunStore({ tableName, client }),
    running: data.runsWorkflows,
    onClose: async () => {
      sfn?.destroy();
      await data.close();
    },
    ...(sfn ? { wake: wakeThroughSfn(sfn) } : {}),
  });
}
