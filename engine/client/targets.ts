import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { InvalidInputError } from '../../core/errors';
import type { OpenRuntimeOptions } from '../open-runtime';
import { startServedControlPlane } from '../serve';
import { DISCOVERY_PATH, type ControlPlaneEndpoints } from '../sfn-endpoint';
import { RolloutClient, type ClientConnection } from './rollout-client';

/** Where the CLI's control plane is. */
export type ControlPlaneTarget =
  | { kind: 'embedded'; runtime: OpenRuntimeOptions }
  | { kind: 'endpoint'; url: string }
  | { kind: 'aws'; stack: string; region?: string; profile?: string };

export const DEFAULT_STACK = 'BaremetalRollout';

/** A client of the target: the one code path (the SDK) for all three. */
export async function connectControlPlane(target: ControlPlaneTarget): Promise<RolloutClient> {
  switch (target.kind) {
    case 'embedded': {
      // Served in-process on an ephemeral loopback port, and reached through the SDK like any other.
      const served = await startServedControlPlane(target.runtime);
      return new RolloutClient({ endpoints: served.endpoints, localCredentials: true, onClose: () => served.close(), local: served.runtime });
    }
    case 'endpoint':
      return new RolloutClient({ endpoints: await discoverEndpoints(target.url), localCredentials: true });
    case 'aws': {
      const cloudFormation = new CloudFormationClient({ ...(target.region ? { region: target.region } : {}), ...(target.profile ? { profile: target.profile } : {}) });
      try {
        const region = target.region ?? (await cloudFormation.config.region());
        const endpoints = await resolveStack(cloudFormation, target.stack, region);
        return new RolloutClient({ endpoints, ...(target.profile ? { profile: target.profile } : {}) });
      } finally {
        cloudFormation.destroy();
      }
    }
  }
}

/** The endpoints a `rollout serve` announces, from its discovery route. */
export async function discoverEndpoints(url: string): Promise<ControlPlaneEndpoints> {
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new InvalidInputError('endpoint', [{ field: '--endpoint', message: `must be a URL (http://host:port), got '${url}'` }]);
  }
  const discovery = new URL(DISCOVERY_PATH, base);
  let response: Response;
  try {
    response = await fetch(discovery);
  } catch (err) {
    throw new Error(`cannot reach a rollout control plane at ${base.origin}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (!response.ok) throw new Error(`${discovery.href} answered ${response.status}: is ${base.origin} a \`rollout serve\`?`);
  return (await response.json()) as ControlPlaneEndpoints;
}

/** The stack outputs the client needs (infra/rollout-stack.ts declares them). */
export const STACK_OUTPUTS = {
  rollingUpgrade: 'RollingUpgradeStateMachineArn',
  groupDeployment: 'GroupDeploymentStateMachineArn',
  tableName: 'SessionsTableName',
  scheduleGroup: 'ScheduleGroupName',
  schedulerRoleArn: 'SchedulerRoleArn',
  /** The REST API's base URL (`rollout env --aws`). */
  apiUrl: 'ApiUrl',
} as const;

/** A deployed stack's REST API base URL, from its `ApiUrl` output, without a trailing slash. */
export async function resolveApiUrl(cloudFormation: Pick<CloudFormationClient, 'send'>, stackName: string, region: string): Promise<string> {
  const described = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }));
  const stack = described.Stacks?.[0];
  if (!stack) throw new Error(`stack ${stackName} not found in ${region}`);
  const url = stack.Outputs?.find((output) => output.OutputKey === STACK_OUTPUTS.apiUrl)?.OutputValue;
  if (!url) throw new Error(`stack ${stackName} has no output ${STACK_OUTPUTS.apiUrl}: is it the rollout stack (infra/), deployed with the REST API?`);
  return url.replace(/\/+$/, '');
}

/** A deployed stack's state machines and table, from its CloudFormation outputs. */
export async function resolveStack(
  cloudFormation: Pick<CloudFormationClient, 'send'>,
  stackName: string,
  region: string,
): Promise<ClientConnection['endpoints']> {
  const described = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }));
  const stack = described.Stacks?.[0];
  if (!stack) throw new Error(`stack ${stackName} not found in ${region}`);
  const outputs = new Map((stack.Outputs ?? []).map((output) => [output.OutputKey, output.OutputValue]));
  const output = (key: string) => {
    const value = outputs.get(key);
    if (!value) throw new Error(`stack ${stackName} has no output ${key}: is it the rollout stack (infra/)?`);
    return value;
  };
  // Optional: a stack deployed before schedules existed still serves sessions.
  const scheduleGroup = outputs.get(STACK_OUTPUTS.scheduleGroup);
  const schedulerRoleArn = outputs.get(STACK_OUTPUTS.schedulerRoleArn);
  return {
    region,
    ...(scheduleGroup ? { scheduleGroup } : {}),
    ...(schedulerRoleArn ? { schedulerRoleArn } : {}),
    tableName: output(STACK_OUTPUTS.tableName),
    stateMachines: { rollingUpgrade: output(STACK_OUTPUTS.rollingUpgrade), groupDeployment: output(STACK_OUTPUTS.groupDeployment) },
  };
}
