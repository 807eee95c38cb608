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
import { BosBootService, HsmInventory, HttpProvisioner, createSiteClients, createSiteFromProfile, resolveSecretReference, type SecretResolution, type SiteFromProfile } from '../../adapters/site';
import { ENVIRONMENT } from '../../contracts';
import { systemClock } from '../../core/clock';
import { InvalidInputError, describeError } from '../../core/errors';
import { parseSiteProfile } from '../../core/site/site-profile';
import type { Site } from '../../ports/site';
import { defaultGroupDeploymentSettings, type GroupDeploymentDependencies } from '../activities/group-deployment/dependencies';
import { defaultSettings, type RollingUpgradeDependencies } from '../activities/rolling-upgrade/dependencies';
import { defaultEnvironmentUpgradeSettings, type EnvironmentUpgradeDependencies } from '../activities/environment-upgrade/dependencies';

/**
 * The site a SITE_PROFILE names (its secrets read from Secrets Manager now, at cold start); undefined
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
    resolveSecret: (reference, field) => resolveSecretReference(reference, field, { env }),
    connectorState: new DynamoDbConnectorState({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
  });
}

/**
 * The environment with the tokens whose secrets the stack names (`*_SECRET_ARN`) read now, at cold start,
 * through Powertools parameters: the deployed functions get ARNs, never tokens.
 */
export async function withSecretsRead(env: NodeJS.ProcessEnv, options: Pick<SecretResolution, 'getSecret'> = {}): Promise<NodeJS.ProcessEnv> {
  const read: NodeJS.ProcessEnv = { ...env };
  for (const [arnKey, tokenKey] of [
    [ENVIRONMENT.slurmTokenSecretArn, ENVIRONMENT.slurmToken],
    [ENVIRONMENT.siteApiTokenSecretArn, ENVIRONMENT.siteApiToken],
  ] as const) {
    const secretArn = optional(env, arnKey);
    if (secretArn) read[tokenKey] = await resolveSecretReference({ secretArn }, arnKey, { ...options, env });
  }
  return read;
}

/** A rolling-upgrade function's dependencies: from SITE_PROFILE when the stack was given a profile, else from the URL variables. */
export async function loadRollingUpgradeDependencies(env: NodeJS.ProcessEnv = process.env): Promise<RollingUpgradeDependencies> {
  const connected = await siteFromProfileEnvironment(env);
  if (!connected) return dependenciesFromEnvironment(await withSecretsRead(env));
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
  if (!connected) return groupDeploymentDependenciesFromEnvironment(await withSecretsRead(env));
  if (!connected.provisioner) throw new InvalidInputError('site profile', [{ field: 'provisioner', message: 'group deployments need a provisioner' }]);
  return {
    store: new DynamoDbDeploymentStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    starts: new DynamoDbRunStartStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    inventory: connected.site.inventory,
    provisioner: connected.provisioner,
    clock: systemClock,
    ...eventsFromEnvironment(env),
    settings: defaultGroupDeploymentSettings,
  };
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
  const read = await withSecretsRead(env);
  const bearerToken = optional(read, ENVIRONMENT.siteApiToken);
  return {
    bootService: new BosBootService({ baseUrl: required(read, ENVIRONMENT.bootServiceUrl), bearerToken }),
    inventory: new HsmInventory({ baseUrl: required(read, ENVIRONMENT.inventoryUrl), bearerToken }),
  };
}

/** An environment-upgrade function's dependencies: the table's stores and the site's boot service and inventory. */
export async function loadEnvironmentUpgradeDependencies(env: NodeJS.ProcessEnv = process.env): Promise<EnvironmentUpgradeDependencies> {
  const tableName = required(env, ENVIRONMENT.tableName);
  const site = await loadBootAndInventory(env);
  if (!site) throw new InvalidInputError('Lambda environment', [{ field: ENVIRONMENT.siteProfile, message: `is not set, nor are ${ENVIRONMENT.bootServiceUrl} and ${ENVIRONMENT.inventoryUrl}` }]);
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
export function dependenciesFromEnvironment(env: NodeJS.ProcessEnv = process.env): RollingUpgradeDependencies {
  const iterations = Number(env[ENVIRONMENT.iterationsPerExecution] ?? defaultSettings.iterationsPerExecution);
  return {
    store: new DynamoDbSessionStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    starts: new DynamoDbRunStartStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    site: createSiteClients({
      workloadManagerUrl: required(env, ENVIRONMENT.workloadManagerUrl),
      bootServiceUrl: required(env, ENVIRONMENT.bootServiceUrl),
      inventoryUrl: required(env, ENVIRONMENT.inventoryUrl),
      slurmApiVersion: optional(env, ENVIRONMENT.slurmApiVersion),
      slurmUserName: optional(env, ENVIRONMENT.slurmUserName),
      slurmToken: optional(env, ENVIRONMENT.slurmToken),
      bearerToken: optional(env, ENVIRONMENT.siteApiToken),
    }),
    clock: systemClock,
    ...eventsFromEnvironment(env),
    settings: { ...defaultSettings, iterationsPerExecution: iterations > 0 ? iterations : defaultSettings.iterationsPerExecution },
  };
}

/**
 * The dependencies of a deployed group-deployment function, from its environment (built once per
 * container). Only HSM and the provisioner: createSiteClients would also want Slurm and BOS URLs,
 * which these functions neither get nor use.
 */
export function groupDeploymentDependenciesFromEnvironment(env: NodeJS.ProcessEnv = process.env): GroupDeploymentDependencies {
  const bearerToken = optional(env, ENVIRONMENT.siteApiToken);
  return {
    store: new DynamoDbDeploymentStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    starts: new DynamoDbRunStartStore({ tableName: required(env, ENVIRONMENT.tableName), client: documentClient() }),
    inventory: new HsmInventory({ baseUrl: required(env, ENVIRONMENT.inventoryUrl), bearerToken }),
    provisioner: new HttpProvisioner({ baseUrl: required(env, ENVIRONMENT.provisionerUrl), bearerToken }),
    clock: systemClock,
    ...eventsFromEnvironment(env),
    settings: defaultGroupDeploymentSettings,
  };
}

/** The status events' publisher when EVENT_BUS_NAME names a bus (the stack sets it). */
function eventsFromEnvironment(env: NodeJS.ProcessEnv): { events?: StatusEventPublisher } {
  const bus = optional(env, ENVIRONMENT.eventBusName);
  return bus ? { events: new EventBridgePublisher(new EventBridgeClient({}), bus) } : {};
}
