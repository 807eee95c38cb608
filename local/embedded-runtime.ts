import path from 'node:path';
import { STATE_MACHINES, type StateMachineName } from '../contracts';
import { DynamoDbConnectorState } from '../adapters/dynamodb/dynamodb-connector-state';
import { DynamoDbDeploymentStore } from '../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbEnvironmentStore } from '../adapters/dynamodb/dynamodb-environment-store';
import { DynamoDbEnvironmentUpgradeStore } from '../adapters/dynamodb/dynamodb-environment-upgrade-store';
import { DynamoDbRunRecords } from '../adapters/dynamodb/dynamodb-run-records';
import { DynamoDbSiteEventStore } from '../adapters/dynamodb/dynamodb-site-event-store';
import { relaySimulatedTriggers, SIMULATED_RELAY } from './simulated-trigger-relay';
import { DynamoDbRunStartStore } from '../adapters/dynamodb/dynamodb-run-start-store';
import { DynamoDbSessionStore } from '../adapters/dynamodb/dynamodb-session-store';
import { DynamoDbTaskRunStore } from '../adapters/dynamodb/dynamodb-task-run-store';
import { SsmTransport } from '../adapters/site/commands/ssm-transport';
import { ScontrolReservations } from '../adapters/site/commands/scontrol-reservations';
import { StriggerTriggers } from '../adapters/site/commands/strigger-triggers';
import { NameMappedWorkloadManager } from '../adapters/site/node-name-map';
import { SiteTaskExecutor, type TaskCommands } from '../adapters/site/tasks/site-tasks';
import { DEFAULT_FANOUT, DEFAULT_NODE_EXEC } from '../core/site/site-profile';
import { defaultTaskGraphSettings, type TaskGraphSettings } from '../lambdas/activities/task-graph/dependencies';
import { createTaskGraphHandlers } from '../lambdas/activities/task-graph/handlers';
import type { SiteClients, SiteFromProfile } from '../adapters/site';
import { simulatedSiteClients } from './simulated-site-clients';
import { serveInProcess } from '../adapters/site/in-process-endpoints';
import { describeError, InvalidInputError } from '../core/errors';
import { defaultSettings, type RollingUpgradeSettings } from '../lambdas/activities/rolling-upgrade/dependencies';
import { defaultGroupDeploymentSettings, type GroupDeploymentSettings } from '../lambdas/activities/group-deployment/dependencies';
import { createGroupDeploymentHandlers } from '../lambdas/activities/group-deployment/handlers';
import { defaultEnvironmentUpgradeSettings, type EnvironmentUpgradeSettings } from '../lambdas/activities/environment-upgrade/dependencies';
import { createEnvironmentUpgradeHandlers } from '../lambdas/activities/environment-upgrade/handlers';
import type { Site } from '../ports/site';
import { createRollingUpgradeHandlers, type RollingUpgradeHandlers } from '../lambdas/activities/rolling-upgrade/handlers';
import type { ConnectorState } from '../ports/connector-state';
import type { Provisioner } from '../ports/provisioner';
import {
  HEAD_NODE_INSTANCE_ID,
  SIMULATED_EPOCH,
  SimClock,
  startSiteSimulator,
  type RunningSiteSimulator,
  type SiteDefinition,
  type TimeSource,
} from '../simulator';
import { JsonLinesEventLog, MemoryEventLog } from '../adapters/events/event-logs';
import type { StatusEventLog } from '../ports/status-events';
import { openDataDir, type OpenedDataDir } from './data-dir';
import { startSiteEventSpoolIntake } from './site-event-spool';
import { countRequests, type LocalDynamoDb, type RequestCounter } from './local-dynamodb';
import { LocalStepFunctions, type ExecutionOutcome, type LocalFunction } from './local-step-functions';
import { LocalExecutions } from './local-executions';
import { ControlPlane } from '../control-plane/control-plane';
import { VirtualClock } from '../time/virtual-clock';

export interface EmbeddedRuntimeOptions {
  /** The simulated site to start; or give `connectedSite`. */
  site?: SiteDefinition;
  /**
   * A site reached through its connectors (a site profile) instead of the in-process simulator,
   * built once the table is open (its command connectors keep their records there).
   */
  connectedSite?: {
    connect(deps: { connectorState: ConnectorState }): Promise<SiteFromProfile>;
    /**
     * The site's clock: a `rollout simulate` site's own scaled clock; without it the wall clock
     * (virtual time cannot jump a real site's reboots, nor span two processes).
     */
    clock?: TimeSource;
    /** The site relay's spool on this host (the profile's siteEvents.spool): its firings are taken from there as they come. */
    siteEventSpool?: string;
  };
  /** Keep sessions on disk here (LevelDB); in memory without it. */
  dataDir?: string;
  /** Loopback port of the DynamoDB endpoint it serves (`rollout serve --dynamodb-port`); any free port without it. */
  dynamoDbPort?: number;
  /**
   * Run on the wall clock sped up this many times (simulated seconds per real second), for
   * watching a run. Without it, on virtual time: the clock jumps to the next due Wait whenever
   * every execution waits, so a makespan is the same on a fast or a slow host.
   */
  timeScale?: number;
  settings?: Partial<RollingUpgradeSettings>;
  deploymentSettings?: Partial<GroupDeploymentSettings>;
  taskGraphSettings?: Partial<TaskGraphSettings>;
  environmentUpgradeSettings?: Partial<EnvironmentUpgradeSettings>;
  /**
   * Reach the simulated site through other connectors than its HTTP APIs (the command-driven ones
   * over its SSM endpoint, say), keeping their records in the runtime's table (`connectorState`).
   * Default: slurmrestd, BOS, HSM and the provisioner API over HTTP.
   */
  connectors?: (simulator: RunningSiteSimulator, deps: { connectorState: ConnectorState }) => SiteClients | Promise<SiteClients>;
  /** Wraps each function as the engine invokes it (the bench and tests measure an increment's reads this way). */
  wrapFunction?: (name: string, fn: LocalFunction) => LocalFunction;
}

/** A `wrapFunction` that pushes onto `reads` the DynamoDB items each call of the function `name` read (the counter is looked up per call). */
export function itemsReadPerCall(name: string, reads: number[], counter: () => { itemsRead: number }): NonNullable<EmbeddedRuntimeOptions['wrapFunction']> {
  return (fnName, fn) =>
    fnName !== name
      ? fn
      : async (payload) => {
          const before = counter().itemsRead;
          const result = await fn(payload);
          reads.push(counter().itemsRead - before);
          return result;
        };
}

/** The status events' JSON-lines file in a data directory. */
export const EVENTS_FILE = 'events.jsonl';

/** A speed of scaled simulated time good for watching: a 5-minute boot takes 0.3 s. */
export const DEFAULT_TIME_SCALE = 1000;

/** What open() builds an embedded runtime from (each part as the field of the same name says). */
interface EmbeddedRuntimeParts {
  engine: LocalStepFunctions;
  store: DynamoDbSessionStore;
  deployments: DynamoDbDeploymentStore;
  taskRuns: DynamoDbTaskRunStore;
  runningSimulator: RunningSiteSimulator | undefined;
  clock: TimeSource;
  dynamoDb: LocalDynamoDb;
  dynamoDbRequests: RequestCounter;
  stateMachineArns: Readonly<Record<StateMachineName, string>>;
  handlers: RollingUpgradeHandlers;
  events: StatusEventLog;
  data: OpenedDataDir;
  environments: DynamoDbEnvironmentStore;
  environmentUpgrades: DynamoDbEnvironmentUpgradeStore;
  site: Site;
  runStarts: DynamoDbRunStartStore;
  siteEvents: DynamoDbSiteEventStore;
  stopServingInProcess: () => void;
  /** Whether the clock is a simulated site's (runsOnSimulatedTime). */
  simulatedTime: boolean;
}

/**
 * The embedded default, whole: the composition root of the control plane on this host. It builds the
 * in-memory store (local/dynamodb-store) as DynamoDB, the site simulator over HTTP as the site (or a
 * site through its profile), the Lambda handlers in-process and the local engine running the workflow
 * files, and is the one ControlPlane over them with the local engine's Executions (LocalExecutions).
 * The parts stay readable for tests and the bench.
 */
export class EmbeddedRuntime extends ControlPlane<ExecutionOutcome> {
  readonly engine: LocalStepFunctions;
  readonly store: DynamoDbSessionStore;
  readonly deployments: DynamoDbDeploymentStore;
  readonly taskRuns: DynamoDbTaskRunStore;
  private readonly runningSimulator: RunningSiteSimulator | undefined;
  readonly clock: TimeSource;
  readonly dynamoDb: LocalDynamoDb;
  readonly dynamoDbRequests: RequestCounter;
  /** ARN of each registered state machine, by its contracts name. */
  readonly stateMachineArns: Readonly<Record<StateMachineName, string>>;
  readonly handlers: RollingUpgradeHandlers;
  /** The workflows' status events: the data directory's events.jsonl, or memory without one. */
  readonly events: StatusEventLog;
  private readonly data: OpenedDataDir;
  /** Fuel's releases and environments, seeded from the site file. */
  readonly environments: DynamoDbEnvironmentStore;
  /** The side-by-side environment upgrades' sessions. */
  readonly environmentUpgrades: DynamoDbEnvironmentUpgradeStore;
  /** The site's clients, as the workflows reach it (the API checks requests against it before it starts one). */
  readonly site: Site;
  /** Runs accepted by the API or refused by their first state, before (or instead of) their records. */
  readonly runStarts: DynamoDbRunStartStore;
  /** The site's trigger firings the relay delivered (POST /site-events of `rollout serve`). */
  readonly siteEvents: DynamoDbSiteEventStore;

  private constructor(parts: EmbeddedRuntimeParts) {
    super({
      upgrades: parts.store,
      deployments: parts.deployments,
      taskRuns: parts.taskRuns,
      records: new DynamoDbRunRecords({ tableName: parts.dynamoDb.tableName, client: parts.dynamoDb.client }),
      executions: new LocalExecutions(parts.engine, parts.stateMachineArns),
      now: () => parts.clock.now(),
      simulatedTime: parts.simulatedTime,
      siteState: () => parts.runningSimulator?.state(),
      // Ends what runs in this process (its executions stop as at a crash: their sessions resume in the next one), then closes the site and the store.
      onClose: async () => {
        parts.stopServingInProcess();
        await parts.engine.stopAll('the embedded runtime closed');
        await parts.runningSimulator?.close();
        await parts.data.close();
      },
    });
    this.engine = parts.engine;
    this.store = parts.store;
    this.deployments = parts.deployments;
    this.taskRuns = parts.taskRuns;
    this.runningSimulator = parts.runningSimulator;
    this.clock = parts.clock;
    this.dynamoDb = parts.dynamoDb;
    this.dynamoDbRequests = parts.dynamoDbRequests;
    this.stateMachineArns = parts.stateMachineArns;
    this.handlers = parts.handlers;
    this.events = parts.events;
    this.data = parts.data;
    this.environments = parts.environments;
    this.environmentUpgrades = parts.environmentUpgrades;
    this.site = parts.site;
    this.runStarts = parts.runStarts;
    this.siteEvents = parts.siteEvents;
  }

  /** Once the engine is served (local/serve.ts): other processes of the data directory wake parked workflows there. */
  announceStepFunctionsEndpoint(url: string): Promise<void> {
    return this.data.announceStepFunctions(url);
  }

  /** The in-process simulator; absent when the runtime drives a site through a profile. */
  get simulator(): RunningSiteSimulator {
    if (!this.runningSimulator) throw new Error('this runtime drives a site through its profile, not the simulator');
    return this.runningSimulator;
  }

  get hasSimulator(): boolean {
    return this.runningSimulator !== undefined;
  }

  /** Opens the data directory and the clock, starts the site, then builds the stores, the handlers and the engine over them. */
  static async start(options: EmbeddedRuntimeOptions): Promise<EmbeddedRuntime> {
    const { connectedSite } = options;
    if ((options.site === undefined) === (connectedSite === undefined)) throw new Error('give exactly one of site (the simulator) and connectedSite');
    const data = await openDataDir({
      runsWorkflows: true,
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...(options.dynamoDbPort ? { dynamoDbPort: options.dynamoDbPort } : {}),
    });
    const { dynamoDb } = data;
    const clock = await runtimeClock(options, dynamoDb);
    const dynamoDbRequests = countRequests(dynamoDb.rawClient);
    const simulator = options.site ? await startSiteSimulator({ site: options.site, clock }) : undefined;
    // The connectors reach the in-process simulator without the loopback round trip; it still serves HTTP for everyone else.
    const stopServingInProcess = simulator ? serveInProcess(simulator.url, (request) => simulator.handle(request)) : () => undefined;
    const table = { tableName: dynamoDb.tableName, client: dynamoDb.client };
    const stores = {
      store: new DynamoDbSessionStore({
        ...table,
        clock,
        ...(options.settings?.lockLeaseSeconds ? { lockLeaseSeconds: options.settings.lockLeaseSeconds } : {}),
      }),
      deployments: new DynamoDbDeploymentStore({ ...table, clock }),
      taskRuns: new DynamoDbTaskRunStore({ ...table, clock }),
      environments: new DynamoDbEnvironmentStore(table),
      environmentUpgrades: new DynamoDbEnvironmentUpgradeStore(table),
      runStarts: new DynamoDbRunStartStore(table),
      siteEvents: new DynamoDbSiteEventStore(table),
    };
    if (options.site) await stores.environments.seed(options.site);
    let connected: ConnectedSite;
    try {
      connected = await connectSite(options, simulator, new DynamoDbConnectorState(table), clock);
    } catch (err) {
      // A profile that cannot connect (a secret not found, say) leaves nothing open behind it.
      stopServingInProcess();
      await simulator?.close();
      await data.close();
      throw err;
    }
    const events = options.dataDir ? new JsonLinesEventLog(path.join(options.dataDir, EVENTS_FILE)) : new MemoryEventLog();
    const { handlers, functions } = createFunctions(options, { ...stores, ...connected, clock, events });
    const engine = new LocalStepFunctions({ functions, time: clock });
    const stateMachineArns = registerStateMachines(engine);
    const runtime = new EmbeddedRuntime({
      ...stores,
      engine,
      runningSimulator: simulator,
      clock,
      dynamoDb,
      dynamoDbRequests,
      stateMachineArns,
      handlers,
      events,
      data,
      site: connected.site,
      stopServingInProcess,
      simulatedTime: runsOnSimulatedTime(options),
    });
    if (simulator) {
      // A simulated site's slurmctld runs its triggers' programs in process: each firing of a session's relay is
      // delivered as the relay would deliver it (nothing fires while no session has set a trigger).
      const stopRelay = relaySimulatedTriggers(simulator.simulator.workloadManager.triggers, { clock, siteEvents: stores.siteEvents, controlPlane: runtime });
      runtime.closeAlso(async () => stopRelay());
    }
    const spool = connectedSite?.siteEventSpool;
    if (spool) {
      const intake = await startSiteEventSpoolIntake({ spool, siteEvents: stores.siteEvents, controlPlane: runtime }).catch(async (err: unknown) => {
        await runtime.close();
        throw new InvalidInputError('site profile', [
          { field: 'workloadManager.siteEvents.spool', message: `the relay's spool ${spool} cannot be read here: ${describeError(err)}` },
        ]);
      });
      runtime.closeAlso(() => intake.close());
    }
    return runtime;
  }
}

/**
 * The runtime's clock: a connected site's own (a `rollout simulate` site's scaled clock) or the wall
 * clock; the simulator's virtual time, or scaled time with a time scale. Simulated time never runs
 * backwards in a data directory: a new process (a resume) starts after what is stored.
 */
async function runtimeClock(options: EmbeddedRuntimeOptions, dynamoDb: LocalDynamoDb): Promise<TimeSource> {
  const { connectedSite } = options;
  if (connectedSite) return connectedSite.clock ?? new SimClock({ timeScale: 1, startAt: Date.now() });
  const startAt = await latestStoredInstant(new DynamoDbSessionStore({ tableName: dynamoDb.tableName, client: dynamoDb.client }));
  return options.timeScale === undefined
    ? new VirtualClock(startAt ? { startAt } : {})
    : new SimClock({ timeScale: options.timeScale, ...(startAt ? { startAt } : {}) });
}

/** The site as the workflows reach it, and the transport task commands go through. */
interface ConnectedSite {
  site: SiteClients;
  taskCommands: TaskCommands | undefined;
}

/**
 * The simulated site's clients (its HTTP APIs and its head node over SSM, or the connectors given), or
 * a profile's site connected; what slurm-reboot and the command provisioner remember is kept in the
 * table (`connectorState`), as the deployed stack keeps it.
 */
async function connectSite(
  options: EmbeddedRuntimeOptions,
  simulator: RunningSiteSimulator | undefined,
  connectorState: ConnectorState,
  clock: TimeSource,
): Promise<ConnectedSite> {
  if (!simulator) {
    const connected = await options.connectedSite!.connect({ connectorState });
    const site: SiteClients = {
      ...connected.site,
      ...(connected.provisioner ? { provisioner: connected.provisioner } : {}),
      ...(connected.taskCommands ? { taskCommands: connected.taskCommands } : {}),
    };
    return { site, taskCommands: site.taskCommands };
  }
  // The simulated site's head node over its SSM endpoint, one client: health checks run there, and task commands reach the nodes through it.
  const headNode = simulatedHeadNode(simulator);
  const site = (await options.connectors?.(simulator, { connectorState })) ?? simulatedSiteConnectors(simulator, clock, headNode);
  const siteEvents = options.site?.slurm.siteEvents;
  if (siteEvents && !options.connectors) {
    // strigger on the simulated head node, as a scontrol connector's siteEvents sets them; the runtime delivers the firings.
    const triggers = new StriggerTriggers({ transport: headNode.transport, relay: SIMULATED_RELAY, ...siteEvents });
    const wlm = site.workloadManager;
    Object.assign(wlm, { triggers: wlm instanceof NameMappedWorkloadManager ? wlm.mappedTriggers(triggers) : triggers });
  }
  // Connectors that bring no task transport: the simulated head node, as a profile's SSM transport would reach it.
  return { site, taskCommands: site.taskCommands ?? headNode };
}

/**
 * The simulated site's connectors when none are given: its HTTP APIs, and its head node over SSM for commands and
 * maintenance reservations (for `connectors` that only add to them: the site's triggers, say).
 */
export function simulatedSiteConnectors(simulator: RunningSiteSimulator, clock: Pick<TimeSource, 'now'>, headNode = simulatedHeadNode(simulator)): SiteClients {
  return {
    ...simulatedSiteClients(simulator),
    commands: headNode.transport,
    reservations: new ScontrolReservations(headNode.transport, { clock }),
  };
}

/** A profile's site on the wall clock is real time; the simulator's, or a `rollout simulate` site's scaled clock, is simulated. */
function runsOnSimulatedTime(options: EmbeddedRuntimeOptions): boolean {
  return !options.connectedSite || options.connectedSite.clock !== undefined;
}

/** What the workflows' handlers are built over. */
interface FunctionDeps
  extends Pick<EmbeddedRuntimeParts, 'store' | 'deployments' | 'taskRuns' | 'environments' | 'environmentUpgrades' | 'runStarts' | 'clock' | 'events'> {
  site: SiteClients;
  taskCommands: TaskCommands | undefined;
}

/** Every workflow's Lambda handlers, in-process, as the engine invokes them (each wrapped by `wrapFunction` if given). */
function createFunctions(options: EmbeddedRuntimeOptions, deps: FunctionDeps): { handlers: RollingUpgradeHandlers; functions: Record<string, LocalFunction> } {
  const { store, deployments, taskRuns, site, clock, events, runStarts } = deps;
  const simulatedTime = runsOnSimulatedTime(options);
  const handlers = createRollingUpgradeHandlers({
    store,
    site,
    clock,
    events,
    starts: runStarts,
    simulatedTime,
    settings: { ...defaultSettings, ...options.settings },
  });
  const deploymentHandlers = createGroupDeploymentHandlers({
    store: deployments,
    inventory: site.inventory,
    provisioner: site.provisioner ?? missingProvisioner,
    locks: store.locks,
    workloadManager: site.workloadManager,
    taskRuns,
    clock,
    simulatedTime,
    events,
    starts: runStarts,
    settings: { ...defaultGroupDeploymentSettings, ...options.deploymentSettings },
  });
  const taskGraphHandlers = createTaskGraphHandlers({
    store: taskRuns,
    starts: runStarts,
    deployments,
    inventory: site.inventory,
    locks: store.locks,
    workloadManager: site.workloadManager,
    executor: new SiteTaskExecutor({ site, clock, ...(deps.taskCommands ? { commands: deps.taskCommands } : {}) }),
    clock,
    simulatedTime,
    settings: { ...defaultTaskGraphSettings, ...options.taskGraphSettings },
  });
  const environmentUpgradeHandlers = createEnvironmentUpgradeHandlers({
    upgrades: deps.environmentUpgrades,
    environments: deps.environments,
    sessions: store,
    site,
    clock,
    simulatedTime,
    settings: { ...defaultEnvironmentUpgradeSettings, ...options.environmentUpgradeSettings },
  });
  const functions: Record<string, LocalFunction> = {};
  for (const [name, handler] of [
    ...Object.entries(handlers),
    ...Object.entries(deploymentHandlers),
    ...Object.entries(taskGraphHandlers),
    ...Object.entries(environmentUpgradeHandlers),
  ]) {
    const fn: LocalFunction = (payload) => handler(payload as never, {});
    functions[name] = options.wrapFunction?.(name, fn) ?? fn;
  }
  return { handlers, functions };
}

/** Every machine under its contracts name, children first (STATE_MACHINES lists them so), as CDK deploys them. */
function registerStateMachines(engine: LocalStepFunctions): Record<StateMachineName, string> {
  return Object.fromEntries((Object.keys(STATE_MACHINES) as StateMachineName[]).map((name) => [name, engine.register(name, STATE_MACHINES[name])])) as Record<
    StateMachineName,
    string
  >;
}

/** The in-process simulator's head node through its SSM endpoint (the real SSM client; it answers at once: poll fast): health check commands run there, task commands reach the nodes with pdsh. */
function simulatedHeadNode(simulator: RunningSiteSimulator): TaskCommands & { transport: SsmTransport } {
  const transport = new SsmTransport({
    instanceIds: [HEAD_NODE_INSTANCE_ID],
    region: 'local',
    endpoint: simulator.urls.ssm,
    credentials: { accessKeyId: 'simulated', secretAccessKey: 'simulated' },
    pollIntervalMs: 2,
    maxPollIntervalMs: 10,
  });
  return { transport, nodeExec: DEFAULT_NODE_EXEC, fanout: DEFAULT_FANOUT };
}

/** Group deployments need a provisioner; a profile without one fails them with this, not at start. */
const missingProvisioner: Provisioner = {
  startAction: () => Promise.reject(new InvalidInputError('site profile', [{ field: 'provisioner', message: 'group deployments need a provisioner' }])),
  getAction: () => Promise.reject(new InvalidInputError('site profile', [{ field: 'provisioner', message: 'group deployments need a provisioner' }])),
};

/**
 * The instant after the newest stored in the data directory's sessions (their creation and their
 * stages' starts), a second on; undefined for an empty store. A resumed session's makespan is then
 * never negative, and its messages keep their order.
 */
async function latestStoredInstant(store: DynamoDbSessionStore): Promise<number | undefined> {
  const sessions = await store.list();
  const latest = Math.max(...sessions.flatMap((s) => [Date.parse(s.createdAt), s.progress.stageStartedAt]).filter(Number.isFinite));
  return Number.isFinite(latest) && latest > SIMULATED_EPOCH ? latest + 1000 : undefined;
}
