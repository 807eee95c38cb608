import { systemClock, type Clock } from '../../core/clock';
import { InvalidInputError } from '../../core/errors';
import { DEFAULT_NODE_EXEC, DEFAULT_FANOUT, transportFor, workloadManagerNames, type SecretReference, type SiteProfile } from '../../core/site/site-profile';
import type { ConnectorRecords, ConnectorState } from '../../ports/connector-state';
import type { Provisioner } from '../../ports/provisioner';
import type { BootService, Inventory, Site, WorkloadManager } from '../../ports/site';
import { BosBootService } from './bos-boot-service';
import { commandConnectors } from './commands/command-connectors';
import { ScontrolReservations } from './commands/scontrol-reservations';
import { HsmInventory } from './hsm-inventory';
import { HttpProvisioner } from './http-provisioner';
import { NameMappedWorkloadManager, NidNameMap } from './node-name-map';
import { secretToken } from './secret-reference';
import type { Token } from './secret-token';
import { SlurmRestWorkloadManager } from './slurm-rest-workload-manager';
import type { TaskCommands } from './tasks/site-tasks';

import type { ConnectorBuilders, ConnectorContext } from './connector-builders';

export type { ConnectorBuilders, ConnectorContext } from './connector-builders';

const timeoutMs = (seconds: number | undefined) => (seconds === undefined ? undefined : seconds * 1000);
const token = async (config: { token?: SecretReference }, context: ConnectorContext) =>
  config.token ? context.resolveSecret(config.token, `${context.path}.token`) : undefined;

/** The connectors over HTTP: slurmrestd, BOS v2, HSM v2 and our provisioner API. */
export const HTTP_CONNECTORS: ConnectorBuilders = {
  workloadManager: {
    slurmrestd: async (config, context) =>
      new SlurmRestWorkloadManager({
        baseUrl: config.url,
        apiVersion: config.apiVersion,
        userName: config.user,
        token: await token(config, context),
        timeoutMs: timeoutMs(config.timeoutSeconds),
      }),
  },
  bootService: {
    bos: async (config, context) =>
      new BosBootService({ baseUrl: config.url, bearerToken: await token(config, context), timeoutMs: timeoutMs(config.timeoutSeconds) }),
  },
  inventory: {
    hsm: async (config, context) =>
      new HsmInventory({ baseUrl: config.url, bearerToken: await token(config, context), timeoutMs: timeoutMs(config.timeoutSeconds), xnames: config.xnames }),
  },
  provisioner: {
    http: async (config, context) =>
      new HttpProvisioner({ baseUrl: config.url, bearerToken: await token(config, context), timeoutMs: timeoutMs(config.timeoutSeconds) }),
  },
};

export interface SiteFromProfileDeps {
  /** Builders merged over the built-in ones (tests; a site's own types). */
  connectors?: Partial<{ [S in keyof ConnectorBuilders]: ConnectorBuilders[S] }>;
  /** Default: environment, files (relative to `baseDir`), Secrets Manager. */
  resolveSecret?: (reference: SecretReference, path: string) => Promise<Token>;
  /** Relative `file` paths are read from here (the profile's directory). Default: the working directory. */
  baseDir?: string;
  /** The site's clock; default the system clock (a `rollout simulate` site: its scaled simulated clock). */
  clock?: Clock;
  /**
   * Where slurm-reboot and the command provisioner keep their boot sessions and actions: the rollout
   * table (DynamoDbConnectorState), so that every activity invocation sees them. Without it those
   * connectors are built but refuse to act (a caller that only reads the inventory needs none).
   */
  connectorState?: ConnectorState;
}

export interface SiteFromProfile {
  site: Site;
  /** Present when the profile has a provisioner. */
  provisioner?: Provisioner;
  /** How task-graph commands reach the nodes; present when the profile has a transport for them (`tasks.transport` or `transport`). */
  taskCommands?: TaskCommands;
}

/** For callers that give no ConnectorState: any use of a record says what is missing. */
const NO_CONNECTOR_STATE: ConnectorState = {
  records<T extends { name: string }>(kind: string): ConnectorRecords<T> {
    const refuse = async (): Promise<never> => {
      throw new Error(`the ${kind} connector keeps its records in the rollout table, and this caller gave it none (createSiteFromProfile's connectorState)`);
    };
    return { get: refuse, create: refuse, update: refuse };
  },
};

/** The Site (and Provisioner) a validated profile describes; a type with no builder is reported with its path. */
export async function createSiteFromProfile(profile: SiteProfile, deps: SiteFromProfileDeps = {}): Promise<SiteFromProfile> {
  const resolveSecret = deps.resolveSecret ?? ((reference, path) => secretToken(reference, path, { baseDir: deps.baseDir }));
  const commands = commandConnectors();
  const builders = {
    workloadManager: { ...HTTP_CONNECTORS.workloadManager, ...commands.workloadManager, ...deps.connectors?.workloadManager },
    bootService: { ...HTTP_CONNECTORS.bootService, ...commands.bootService, ...deps.connectors?.bootService },
    inventory: { ...HTTP_CONNECTORS.inventory, ...commands.inventory, ...deps.connectors?.inventory },
    provisioner: { ...HTTP_CONNECTORS.provisioner, ...commands.provisioner, ...deps.connectors?.provisioner },
  };
  const clock = deps.clock ?? systemClock;
  const baseDir = deps.baseDir ?? process.cwd();
  const connectorState = deps.connectorState ?? NO_CONNECTOR_STATE;
  let inventoryBuilt: Promise<Inventory> | undefined;
  const siteInventory = () => (inventoryBuilt ??= build<Inventory>('inventory', profile.inventory));
  const context = (path: string): ConnectorContext => ({
    profile,
    path,
    transport: (s) => transportFor(profile, s),
    resolveSecret,
    clock,
    baseDir,
    connectorState,
    hasConnectorState: deps.connectorState !== undefined,
    inventory: siteInventory,
  });
  const build = async <T>(service: keyof ConnectorBuilders, config: { type: string }): Promise<T> => {
    const builder = (builders[service] as Record<string, ((c: unknown, x: ConnectorContext) => T | Promise<T>) | undefined>)[config.type];
    if (!builder) {
      throw new InvalidInputError('site profile', [{ field: `${service}.type`, message: `no '${config.type}' connector is available in this build` }]);
    }
    return builder(config, context(service));
  };
  const [wlmConnector, bootService, inventory, provisioner] = await Promise.all([
    build<WorkloadManager>('workloadManager', profile.workloadManager),
    build<BootService>('bootService', profile.bootService),
    siteInventory(),
    profile.provisioner ? build<Provisioner>('provisioner', profile.provisioner) : undefined,
  ]);
  // One node, two names: the connectors keep Slurm's names; above them, the session's are the inventory's.
  const namePattern = workloadManagerNames(profile);
  const nodeNames = namePattern === 'same' ? undefined : new NidNameMap(inventory, namePattern, () => clock.now());
  const workloadManager = nodeNames ? new NameMappedWorkloadManager(wlmConnector, nodeNames) : wlmConnector;
  const tasks = { transport: profile.tasks?.transport };
  const taskCommands: TaskCommands | undefined =
    (tasks.transport ?? profile.transport)
      ? {
          transport: commands.transportOf(tasks, context('tasks')),
          nodeExec: profile.tasks?.nodeExec ?? DEFAULT_NODE_EXEC,
          fanout: profile.tasks?.fanout ?? DEFAULT_FANOUT,
        }
      : undefined;
  // The profile's own transport reaches the head node: health check commands run there.
  const headNode = profile.transport ? commands.transportOf({}, context('transport')) : undefined;
  // Maintenance reservations (reserveSlots) by scontrol, where scontrol reaches slurmctld: the scontrol connector's transport, else the head node's.
  const slurmCommands = profile.workloadManager.type === 'scontrol' ? commands.transportOf(profile.workloadManager, context('workloadManager')) : headNode;
  const scontrol = profile.commandPaths?.scontrol;
  const reservations = slurmCommands ? new ScontrolReservations(slurmCommands, { clock, ...(scontrol ? { scontrol } : {}) }) : undefined;
  return {
    site: {
      workloadManager,
      bootService,
      inventory,
      ...(headNode ? { commands: headNode } : {}),
      ...(nodeNames ? { nodeNames } : {}),
      ...(reservations ? { reservations } : {}),
    },
    ...(provisioner ? { provisioner } : {}),
    ...(taskCommands ? { taskCommands } : {}),
  };
}
