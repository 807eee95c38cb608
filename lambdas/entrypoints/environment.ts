import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbSessionStore } from '../adapters/dynamodb/dynamodb-session-store';
import { createSiteClients } from '../adapters/site';
import { systemClock } from '../domain/clock';
import { InvalidInputError } from '../domain/errors';
import { defaultSettings, type RollingUpgradeDependencies } from '../handlers/rolling-upgrade/dependencies';

/** Environment variables the deployed functions read; the CDK stack sets them. */
export const ENVIRONMENT = {
  tableName: 'TABLE_NAME',
  workloadManagerUrl: 'WORKLOAD_MANAGER_URL',
  slurmApiVersion: 'SLURM_API_VERSION',
  slurmUserName: 'SLURM_USER_NAME',
  slurmToken: 'SLURM_TOKEN',
  bootServiceUrl: 'BOOT_SERVICE_URL',
  inventoryUrl: 'INVENTORY_URL',
  provisionerUrl: 'PROVISIONER_URL',
  iterationsPerExecution: 'ITERATIONS_PER_EXECUTION',
} as const;

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new InvalidInputError('Lambda environment', [{ field: name, message: 'is not set' }]);
  return value;
}

/** The dependencies of a deployed function, from its environment (built once per container). */
export function dependenciesFromEnvironment(env: NodeJS.ProcessEnv = process.env): RollingUpgradeDependencies {
  const client = DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } });
  const iterations = Number(env[ENVIRONMENT.iterationsPerExecution] ?? defaultSettings.iterationsPerExecution);
  return {
    store: new DynamoDbSessionStore({ tableName: required(env, ENVIRONMENT.tableName), client }),
    site: createSiteClients({
      workloadManagerUrl: required(env, ENVIRONMENT.workloadManagerUrl),
      bootServiceUrl: required(env, ENVIRONMENT.bootServiceUrl),
      inventoryUrl: required(env, ENVIRONMENT.inventoryUrl),
      ...(env[ENVIRONMENT.slurmApiVersion] ? { slurmApiVersion: env[ENVIRONMENT.slurmApiVersion] } : {}),
      ...(env[ENVIRONMENT.slurmUserName] ? { slurmUserName: env[ENVIRONMENT.slurmUserName] } : {}),
      ...(env[ENVIRONMENT.slurmToken] ? { slurmToken: env[ENVIRONMENT.slurmToken] } : {}),
    }),
    clock: systemClock,
    settings: { ...defaultSettings, iterationsPerExecution: iterations > 0 ? iterations : defaultSettings.iterationsPerExecution },
  };
}
