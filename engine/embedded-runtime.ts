import { DynamoDbDeploymentStore } from '../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbSessionStore } from '../adapters/dynamodb/dynamodb-session-store';
import { createSiteClients, type SiteClients } from '../adapters/site';
import { defaultSettings, type RollingUpgradeSettings } from '../lambdas/activities/rolling-upgrade/dependencies';
import { defaultGroupDeploymentSettings, type GroupDeploymentSettings } from '../lambdas/activities/group-deployment/dependencies';
import { createGroupDeploymentHandlers } from '../lambdas/activities/group-deployment/handlers';
import { createRollingUpgradeHandlers, type LambdaHandler, type RollingUpgradeFunctionName } from '../lambdas/activities/rolling-upgrade/handlers';
import { SimClock, startSiteSimulator, type RunningSiteSimulator, type SiteDefinition } from '../simulator';
import { countRequests, startLocalDynamoDb, type LocalDynamoDb, type RequestCounter } from './local-dynamodb';
import { LocalStepFunctions, type LocalFunction } from './local-step-functions';
import { claimDataDirWaiting } from './runtime-registry';
import { WORKFLOW_FILES } from './workflow-files';

export interface EmbeddedRuntimeOptions {
  site: SiteDefinition;
  /** Keep sessions on disk here (LevelDB); in memory without it. */
  dataDir?: string;
  /** Simulated seconds per real second. */
  timeScale?: number;
  settings?: Partial<RollingUpgradeSettings>;
  deploymentSettings?: Partial<GroupDeploymentSettings>;
  /**
   * Reach the simulated site through other connectors than its HTTP APIs (the command-driven ones
   * over its SSM endpoint, say). Default: slurmrestd, BOS, HSM and the provisioner API over HTTP.
   */
  connectors?: (simulator: RunningSiteSimulator) => SiteClients;
}

/** How long a run waits for another process (a `rollout session` command, say) to let go of its data directory. */
const DATA_DIR_WAIT_MS = 30_000;

/** Default speed of simulated time: a 5-minute boot takes 0.3 s. */
export const DEFAULT_TIME_SCALE = 1000;

/**
 * The embedded default, whole: dynalite as DynamoDB, the site simulator over HTTP as the site,
 * the Lambda handlers in-process, and the workflow files run by the local engine.
 */
export class EmbeddedRuntime {
  private constructor(
    readonly engine: LocalStepFunctions,
    readonly store: DynamoDbSessionStore,
    readonly deployments: DynamoDbDeploymentStore,
    readonly simulator: RunningSiteSimulator,
    readonly clock: SimClock,
    readonly dynamoDb: LocalDynamoDb,
    readonly dynamoDbRequests: RequestCounter,
    readonly rollingUpgradeArn: string,
    readonly groupDeploymentArn: string,
    readonly handlers: Record<RollingUpgradeFunctionName, LambdaHandler>,
    private readonly releaseDataDir: () => Promise<void>,
  ) {}

  static async start(options: EmbeddedRuntimeOptions): Promise<EmbeddedRuntime> {
    const clock = new SimClock({ timeScale: options.timeScale ?? DEFAULT_TIME_SCALE });
    // Claimed before the database opens: a second process opening the same LevelDB would crash.
    const claim = options.dataDir ? await claimDataDirWaiting(options.dataDir, DATA_DIR_WAIT_MS) : undefined;
    const dynamoDb = await startLocalDynamoDb(options.dataDir ? { dataDir: options.dataDir } : {});
    await claim?.announce(dynamoDb.endpoint, dynamoDb.tableName, true);
    const dynamoDbRequests = countRequests(dynamoDb.rawClient);
    const simulator = await startSiteSimulator({ site: options.site, clock });
    const store = new DynamoDbSessionStore({ tableName: dynamoDb.tableName, client: dynamoDb.client, clock });
    const deployments = new DynamoDbDeploymentStore({ tableName: dynamoDb.tableName, client: dynamoDb.client });
    const site = options.connectors?.(simulator) ?? createSiteClients({
      workloadManagerUrl: simulator.url,
      bootServiceUrl: simulator.url,
      inventoryUrl: simulator.url,
      provisionerUrl: simulator.url,
    });
    const handlers = createRollingUpgradeHandlers({ store, site, clock, settings: { ...defaultSettings, ...options.settings } });
    const deploymentHandlers = createGroupDeploymentHandlers({
      store: deployments,
      inventory: site.inventory,
      provisioner: site.provisioner!,
      clock,
      settings: { ...defaultGroupDeploymentSettings, ...options.deploymentSettings },
    });
    const functions: Record<string, LocalFunction> = {};
    for (const [name, handler] of [...Object.entries(handlers), ...Object.entries(deploymentHandlers)]) {
      functions[name] = (payload) => handler(payload as never, {});
    }

    const engine = new LocalStepFunctions({
      functions,
      waitMs: (seconds) => clock.realMsFor(seconds),
      // Every workflow here waits `waitSeconds` (SecondsPath) after the task that asked for it.
      holdResultMs: (result) => {
        const seconds = (result as { waitSeconds?: unknown } | null)?.waitSeconds;
        return typeof seconds === 'number' && seconds > 0 ? clock.realMsFor(seconds) : 0;
      },
    });
    const rollingUpgradeArn = engine.register('rolling-upgrade', WORKFLOW_FILES.rollingUpgrade);
    // Child workflows are registered under the names their ARNs have in the parents (`${<Name>StateMachineArn}`).
    engine.register('RunNodeBatches', WORKFLOW_FILES.runNodeBatches);
    engine.register('DeployGroup', WORKFLOW_FILES.deployGroup);
    const groupDeploymentArn = engine.register('group-deployment', WORKFLOW_FILES.groupDeployment);
    const release = async () => claim?.release();
    return new EmbeddedRuntime(engine, store, deployments, simulator, clock, dynamoDb, dynamoDbRequests, rollingUpgradeArn, groupDeploymentArn, handlers, release);
  }

  async close(): Promise<void> {
    await this.simulator.close();
    await this.dynamoDb.close();
    // Only once the database is closed may another process open it.
    await this.releaseDataDir();
  }
}
