import { DynamoDbDeploymentStore } from '../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbSessionStore } from '../adapters/dynamodb/dynamodb-session-store';
import type { SiteDefinition } from '../simulator';
import { openDataDir } from './data-dir';
import { EmbeddedRuntime } from './embedded-runtime';
import type { RolloutRuntime, RolloutSessions } from './runtime';
import { StoreSessions } from './store-sessions';

export { DEFAULT_TIME_SCALE } from './embedded-runtime';

/**
 * Where the site comes from: a simulated site definition (the simulator starts in-process) or,
 * with real connectors, a site profile (the runtime connects to the site instead).
 */
export type SiteSource = { kind: 'simulated'; definition: SiteDefinition };

export interface OpenRuntimeOptions {
  site: SiteSource;
  /** Keep sessions on disk here; in memory without it. */
  dataDir?: string;
  /** Simulated seconds per real second (a simulated site only); without it the run is on virtual time. */
  timeScale?: number;
}

/** A control plane that runs workflows: today the embedded one, owning the data directory while it runs. */
export async function openRuntime(options: OpenRuntimeOptions): Promise<RolloutRuntime> {
  return EmbeddedRuntime.start({
    site: options.site.definition,
    ...(options.timeScale !== undefined ? { timeScale: options.timeScale } : {}),
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
  });
}

/**
 * The sessions of a data directory, for a command that only reads or cancels: through the live
 * owner's endpoint when a process holds it, else opened here for the command's duration.
 */
export async function openSessions(options: { dataDir: string }): Promise<RolloutSessions> {
  const data = await openDataDir({ dataDir: options.dataDir, runsWorkflows: false });
  const { tableName, client } = data.dynamoDb;
  return new StoreSessions(
    new DynamoDbSessionStore({ tableName, client }),
    new DynamoDbDeploymentStore({ tableName, client }),
    data.runsWorkflows,
    () => data.close(),
  );
}
