import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EventBridgePublisher } from '../../adapters/events/eventbridge-publisher';
import type { StatusEventPublisher } from '../../ports/status-events';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbConnectorState } from '../../adapters/dynamodb/dynamodb-connector-state';
import { DynamoDbDeploymentStore } from '../../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbEnvironmentStore } from '../../adapters/dynamodb/dynamodb-environment-store';
import { DynamoDbEnvironmentUpgradeStore } from '../../adapters/dynamodb/dynamodb-environment-upgrade-store';
import { DynamoDbRunStartStore } from '../../adapters/dynamodb/dynamodb-run-start-store';
import { DynamoDbSessionStore } from '../../adapters/dynamodb/dynamodb-session-store';
import { DynamoDbNodeLocks } from '../../adapters/dynamodb/node-locks';
import { DynamoDbTaskRunStore } from '../../adapters/dynamodb/dynamodb-task-run-store';
import { SiteTaskExecutor } from '../../adapters/site/tasks/site-tasks';
import {
  BosBootService,
  HsmInventory,
  HttpProvisioner,
  createSiteClients,
  createSiteFromProfile,
  type SecretResolution,
  type SiteFromProfile,
} from '../../adapters/site';
import { SlurmRestWorkloadManager } from '../../adapters/site/slurm-rest-workload-manager';
import { secretToken } from '../../adapters/site/secret-reference';
import type { Token } from '../../adapters/site/secret-token';
import { ENVIRONMENT } from '../../contracts';
import { systemClock } from '../../core/clock';
import { InvalidInputError, describeError } from '../../core/errors';
import { CSM_NID_NAME_PATTERN, parseNidNamePattern } from '../../core/site/node-names';
import { parseSiteProfile } from '../../core/site/site-profile';
import type { Site } from '../../ports/site';
import { defaultGroupDeploymentSettings, type GroupDeploymentDependencies } from '../activities/group-deployment/dependencies';
import { defaultSettings, type RollingUpgradeDependencies } from '../activities/rolling-upgrade/dependencies';
import { defaultTaskGraphSettings, type TaskGraphDependencies } from '../activities/task-graph/dependencies';
import { defaultEnvironmentUpgradeSettings, type EnvironmentUpgradeDependencies } from '../activities/environment-upgrade/dependencies';

/**
 * The site a SITE_PROFILE names (its secrets read from Secrets Manager when their connector is first
 * used, then again every SECRET_MAX_AGE_SECONDS and after a 401); undefined
 * without one. slurm-reboot and the command provisioner keep their records in the rollout table:
 * the next activity may run in another container.
 */
async function siteFromProfileEnvironment(env: NodeJS.ProcessEnv): Promise<SiteFromProfile | undefined> {
  const text = optional(env, ENVIRONMENT.siteProfile);
  if (!text) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InvalidInputError('Lambda environment', [{ field: ENVIRONMENT.siteProfile, message: `is not JSON: ${describeError(err)}` }]);
  }
  const profile = parseSiteProfile(value, `site profile in ${ENVIRONMENT.siteProfile}`);
  return createSiteFromProfile(profile, {
    resolveSecret: (reference, field) => secretToken(reference, field, { env }),
    connectorState: new DynamoDbConnectorState({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
  });
}

/** The site's tokens: Slurm's JWT, and the bearer token of BOS, HSM and the provisioner. */
export interface SiteTokens {
  slurmToken?: Token;
  siteApiToken?: Token;
}

/**
 * The tokens whose secrets the stack names (`*_SECRET_ARN`), read through Powertools parameters when a
 * connector first sends them (a function reads only the secrets of the services it calls, all the stack
 * grants it), and again every SECRET_MAX_AGE_SECONDS and after a 401 (a rotation reaches a warm
 * container); without an ARN, the token variables (a local run). The deployed functions get ARNs, never tokens.
 */
export async function siteTokens(env: NodeJS.ProcessEnv, options: Pick<SecretResolution, 'getSecret'> = {}): Promise<SiteTokens> {
  const tokens: SiteTokens = {};
  for (const [arnKey, tokenKey, field] of [
    [ENVIRONMENT.slurmTokenSecretArn, ENVIRONMENT.slurmToken, 'slurmToken'],
    [ENVIRONMENT.siteApiTokenSecretArn, ENVIRONMENT.siteApiToken, 'siteApiToken'],
  ] as const) {
    const secretArn = optional(env, arnKey);
    const token = secretArn ? await secretToken({ secretArn }, arnKey, { ...options, env }) : optional(env, tokenKey);
    if (token) tokens[field] = token;
  }
  return tokens;
}

/** A rolling-upgrade function's dependencies: from SITE_PROFILE when the stack was given a profile, else from the URL variables. */
export async function loadRollingUpgradeDependencies(env: NodeJS.ProcessEnv = process.env): Promise<RollingUpgradeDependencies> {
  const connected = await siteFromProfileEnvironment(env);
  if (!connected) return dependenciesFromEnvironment(env, await siteTokens(env));
  const iterations = Number(env[ENVIRONMENT.iterationsPerExecution] ?? defaultSettings.iterationsPerExecution);
  return {
    store: new DynamoDbSessionStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    starts: new DynamoDbRunStartStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    site: connected.site,
    clock: systemClock,
    ...eventsFromEnvironment(env),
    settings: { ...defaultSettings, iterationsPerExecution: iterations > 0 ? iterations : defaultSettings.iterationsPerExecution },
  };
}

/** A group-deployment function's dependencies: from SITE_PROFILE (which must name a provisioner), else from the URL variables. */
export async function loadGroupDeploymentDependencies(env: NodeJS.ProcessEnv = process.env): Promise<GroupDeploymentDependencies> {
  const connected = await siteFromProfileEnvironment(env);
  if (!connected) return groupDeploymentDependenciesFromEnvironment(env, await siteTokens(env));
  if (!connected.provisioner) throw new InvalidInputError('site profile', [{ field: 'provisioner', message: 'group deployments need a provisioner' }]);
  return {
    store: new DynamoDbDeploymentStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    starts: new DynamoDbRunStartStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    inventory: connected.site.inventory,
    provisioner: connected.provisioner,
    locks: nodeLocks(env),
    workloadManager: connected.site.workloadManager,
    taskRuns: taskRunStore(env),
    clock: systemClock,
    ...eventsFromEnvironment(env),
    settings: defaultGroupDeploymentSettings,
  };
}

/**
 * A task-graph function's dependencies: the site from SITE_PROFILE (with the transport its command
 * tasks reach the nodes through), else Slurm, BOS and HSM from the URL variables (reboot, drain and
 * resume tasks only: no transport).
 */
export async function loadTaskGraphDependencies(env: NodeJS.ProcessEnv = process.env): Promise<TaskGraphDependencies> {
  const connected = await siteFromProfileEnvironment(env);
  const site = connected?.site ?? dependenciesFromEnvironment(env, await siteTokens(env)).site;
  const tableName = required(env, ENVIRONMENT.tableName);
  const iterations = Number(env[ENVIRONMENT.iterationsPerExecution] ?? defaultTaskGraphSettings.iterationsPerExecution);
  return {
    store: taskRunStore(env),
    starts: new DynamoDbRunStartStore({ tableName, client: documentClient() }),
    deployments: new DynamoDbDeploymentStore({ tableName, client: documentClient() }),
    inventory: site.inventory,
    locks: nodeLocks(env),
    workloadManager: site.workloadManager,
    executor: new SiteTaskExecutor({ site, clock: systemClock, ...(connected?.taskCommands ? { commands: connected.taskCommands } : {}) }),
    clock: systemClock,
    settings: { ...defaultTaskGraphSettings, iterationsPerExecution: iterations > 0 ? iterations : defaultTaskGraphSettings.iterationsPerExecution },
  };
}

/** The node locks every workflow of the table shares. */
function nodeLocks(env: NodeJS.ProcessEnv): DynamoDbNodeLocks {
  return new DynamoDbNodeLocks({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient(), clock: systemClock });
}

function taskRunStore(env: NodeJS.ProcessEnv): DynamoDbTaskRunStore {
  return new DynamoDbTaskRunStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() });
}

/**
 * The boot service and the inventory: from SITE_PROFILE, else from the URL variables; undefined
 * when the function has neither. The REST API checks requests against them before it answers (the
 * workflows check again, and their sessions say why they stopped); the environment upgrade drives them.
 */
export async function loadBootAndInventory(env: NodeJS.ProcessEnv = process.env): Promise<Pick<Site, 'bootService' | 'inventory'> | undefined> {
  const connected = await siteFromProfileEnvironment(env);
  if (connected) return connected.site;
  if (!optional(env, ENVIRONMENT.bootServiceUrl) || !optional(env, ENVIRONMENT.inventoryUrl)) return undefined;
  const { siteApiToken: bearerToken } = await siteTokens(env);
  return {
    bootService: new BosBootService({ baseUrl: tokenUrl(env, ENVIRONMENT.bootServiceUrl, bearerToken), bearerToken }),
    inventory: new HsmInventory({ baseUrl: tokenUrl(env, ENVIRONMENT.inventoryUrl, bearerToken), bearerToken }),
  };
}

/** An environment-upgrade function's dependencies: the table's stores and the site's boot service and inventory. */
export async function loadEnvironmentUpgradeDependencies(env: NodeJS.ProcessEnv = process.env): Promise<EnvironmentUpgradeDependencies> {
  const tableName = required(env, ENVIRONMENT.tableName);
  const site = await loadBootAndInventory(env);
  if (!site)
    throw new InvalidInputError('Lambda environment', [
      { field: ENVIRONMENT.siteProfile, message: `is not set, nor are ${ENVIRONMENT.bootServiceUrl} and ${ENVIRONMENT.inventoryUrl}` },
    ]);
  const iterations = Number(env[ENVIRONMENT.iterationsPerExecution] ?? defaultEnvironmentUpgradeSettings.iterationsPerExecution);
  return {
    upgrades: new DynamoDbEnvironmentUpgradeStore({ tableName, client: documentClient() }),
    environments: new DynamoDbEnvironmentStore({ tableName, client: documentClient() }),
    sessions: new DynamoDbSessionStore({ tableName, client: documentClient() }),
    site,
    clock: systemClock,
    settings: { ...defaultEnvironmentUpgradeSettings, ...(iterations > 0 ? { iterationsPerExecution: iterations } : {}) },
  };
}

export function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new InvalidInputError('Lambda environment', [{ field: name, message: 'is not set' }]);
  return value;
}

/** Empty counts as unset: CloudFormation cannot leave a variable out conditionally, only set it to ''. */
function optional(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return env[name] || undefined;
}

export function documentClient(): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } });
}

/** The dependencies of a deployed rolling-upgrade function, from its environment (built once per container). */
export function dependenciesFromEnvironment(env: NodeJS.ProcessEnv = process.env, tokens: SiteTokens = plainTokens(env)): RollingUpgradeDependencies {
  const iterations = Number(env[ENVIRONMENT.iterationsPerExecution] ?? defaultSettings.iterationsPerExecution);
  return {
    store: new DynamoDbSessionStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    starts: new DynamoDbRunStartStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    site: createSiteClients({
      workloadManagerUrl: tokenUrl(env, ENVIRONMENT.workloadManagerUrl, tokens.slurmToken),
      bootServiceUrl: tokenUrl(env, ENVIRONMENT.bootServiceUrl, tokens.siteApiToken),
      inventoryUrl: tokenUrl(env, ENVIRONMENT.inventoryUrl, tokens.siteApiToken),
      slurmApiVersion: optional(env, ENVIRONMENT.slurmApiVersion),
      slurmUserName: optional(env, ENVIRONMENT.slurmUserName),
      slurmToken: tokens.slurmToken,
      bearerToken: tokens.siteApiToken,
      nodeNames: nodeNamesFromEnvironment(env),
    }),
    clock: systemClock,
    ...eventsFromEnvironment(env),
    settings: { ...defaultSettings, iterationsPerExecution: iterations > 0 ? iterations : defaultSettings.iterationsPerExecution },
  };
}

/**
 * The dependencies of a deployed group-deployment function, from its environment (built once per
 * container). HSM, the provisioner and, where the stack names it, slurmrestd (read only: a batch's
 * nodes claimed at the site by another control plane are left alone); createSiteClients would also
 * want a BOS URL, which these functions neither get nor use.
 */
export function groupDeploymentDependenciesFromEnvironment(
  env: NodeJS.ProcessEnv = process.env,
  tokens: SiteTokens = plainTokens(env),
): GroupDeploymentDependencies {
  const bearerToken = tokens.siteApiToken;
  const workloadManager = optional(env, ENVIRONMENT.workloadManagerUrl)
    ? new SlurmRestWorkloadManager({
        baseUrl: tokenUrl(env, ENVIRONMENT.workloadManagerUrl, tokens.slurmToken),
        apiVersion: optional(env, ENVIRONMENT.slurmApiVersion),
        userName: optional(env, ENVIRONMENT.slurmUserName),
        token: tokens.slurmToken,
      })
    : undefined;
  return {
    store: new DynamoDbDeploymentStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    inventory: new HsmInventory({ baseUrl: tokenUrl(env, ENVIRONMENT.inventoryUrl, bearerToken), bearerToken }),
    provisioner: new HttpProvisioner({ baseUrl: tokenUrl(env, ENVIRONMENT.provisionerUrl, bearerToken), bearerToken }),
    locks: nodeLocks(env),
    ...(workloadManager ? { workloadManager } : {}),
    taskRuns: taskRunStore(env),
    starts: new DynamoDbRunStartStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    clock: systemClock,
    ...eventsFromEnvironment(env),
    settings: defaultGroupDeploymentSettings,
  };
}

/**
 * NODE_NAMES: how Slurm names the nodes HSM knows by xname. The URL-configured stack's inventory is
 * HSM, so its default is CSM's, as for a profile with an hsm inventory (core/site/site-profile.ts).
 */
function nodeNamesFromEnvironment(env: NodeJS.ProcessEnv): string {
  const value = optional(env, ENVIRONMENT.nodeNames) ?? CSM_NID_NAME_PATTERN;
  const parsed = value === 'same' ? value : parseNidNamePattern(value);
  if (typeof parsed === 'string' && parsed !== 'same')
    throw new InvalidInputError('Lambda environment', [{ field: ENVIRONMENT.nodeNames, message: `'same' or ${parsed}` }]);
  return value;
}

/**
 * A service's URL: https when a token travels to it, unless ALLOW_INSECURE_HTTP says this is a lab
 * (the stack's parameters refuse http:// already; this holds for an environment set by hand too).
 */
function tokenUrl(env: NodeJS.ProcessEnv, name: string, token: Token | undefined): string {
  const url = required(env, name);
  if (token !== undefined && !url.startsWith('https://') && env[ENVIRONMENT.allowInsecureHttp] !== 'true') {
    throw new InvalidInputError('Lambda environment', [
      { field: name, message: `a token is only sent over https, not to ${url} (${ENVIRONMENT.allowInsecureHttp}=true in a lab)` },
    ]);
  }
  return url;
}

/** The token variables as they are (empty counts as unset). */
function plainTokens(env: NodeJS.ProcessEnv): SiteTokens {
  const slurmToken = optional(env, ENVIRONMENT.slurmToken);
  const siteApiToken = optional(env, ENVIRONMENT.siteApiToken);
  return { ...(slurmToken ? { slurmToken } : {}), ...(siteApiToken ? { siteApiToken } : {}) };
}

/** The status events' publisher when EVENT_BUS_NAME names a bus (the stack sets it). */
function eventsFromEnvironment(env: NodeJS.ProcessEnv): { events?: StatusEventPublisher } {
  const bus = optional(env, ENVIRONMENT.eventBusName);
  return bus ? { events: new EventBridgePublisher(new EventBridgeClient({}), bus) } : {};
}
