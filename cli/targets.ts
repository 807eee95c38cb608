import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { InvalidInputError, describeError } from '../core/errors';
import { ControlPlaneUnreachableError } from '../local/errors';
import { openRuntime, type OpenRuntimeOptions } from '../local/open-runtime';
import { startServedControlPlane } from '../local/serve';
import { DISCOVERY_PATH, type ControlPlaneEndpoints } from '../control-plane/endpoints';
import { rolloutClient, type ClientConnection } from '../control-plane/aws-client/rollout-client';
import type { ControlPlane } from '../control-plane/control-plane';

/** Where the CLI's control plane is. */
export type ControlPlaneTarget =
  | { kind: 'embedded'; runtime: OpenRuntimeOptions }
  /**
   * A `rollout serve` (its discovery route names everything), or an endpoint serving the AWS APIs
   * (LocalStack after a `cdklocal deploy`): there the stack's CloudFormation outputs name the state
   * machines and the table (`stack`, default BaremetalRollout; `region`, default AWS_REGION or us-east-1).
   */
  | { kind: 'endpoint'; url: string; stack?: string; region?: string }
  | { kind: 'aws'; stack: string; region?: string; profile?: string };

/** LocalStack's (and moto's) region when none is given. */
const ENDPOINT_DEFAULT_REGION = 'us-east-1';

export const DEFAULT_STACK = 'BaremetalRollout';

/**
 * The control plane of the target: the embedded one in this process (its executions on the local
 * engine), or one reached through the SDK (a `rollout serve`, LocalStack, the deployed stack).
 */
export async function connectControlPlane(target: ControlPlaneTarget): Promise<ControlPlane> {
  switch (target.kind) {
    case 'embedded':
      // Called in process. With a data directory it is also served on ephemeral loopback ports, for the
      // other processes of the directory (they find it in its runtime.json); without one none can find it.
      return target.runtime.dataDir ? (await startServedControlPlane(target.runtime)).runtime : openRuntime(target.runtime);
    case 'endpoint': {
      const discovered = await discoverEndpoints(target.url);
      return rolloutClient({
        endpoints: discovered ?? (await stackAtEndpoint(target.url, target.stack ?? DEFAULT_STACK, target.region)),
        localCredentials: true,
      });
    }
    case 'aws': {
      const cloudFormation = new CloudFormationClient({
        ...(target.region ? { region: target.region } : {}),
        ...(target.profile ? { profile: target.profile } : {}),
      });
      try {
        const region = target.region ?? (await cloudFormation.config.region());
        const endpoints = await resolveStack(cloudFormation, target.stack, region);
        return rolloutClient({ endpoints, ...(target.profile ? { profile: target.profile } : {}) });
      } finally {
        cloudFormation.destroy();
      }
    }
  }
}

/**
 * The endpoints a `rollout serve` announces, from its discovery route; undefined when the endpoint
 * has no such route (LocalStack: the stack's outputs say instead).
 */
export async function discoverEndpoints(url: string): Promise<ControlPlaneEndpoints | undefined> {
  const base = endpointUrl(url);
  const discovery = new URL(DISCOVERY_PATH, base);
  let response: Response;
  try {
    response = await fetch(discovery);
  } catch (err) {
    // fetch's own message is just "fetch failed"; its cause says why (ECONNREFUSED, ENOTFOUND, ...).
    throw new ControlPlaneUnreachableError(base.origin, describeError((err as { cause?: unknown }).cause ?? err), { cause: err });
  }
  const isJson = response.headers.get('content-type')?.includes('json') ?? false;
  if (response.ok && isJson) return (await response.json()) as ControlPlaneEndpoints;
  await response.body?.cancel();
  return undefined;
}

/**
 * An endpoint that serves the AWS APIs themselves (LocalStack): the stack's outputs, read through
 * CloudFormation at that endpoint, name the state machines and the table; every API is that endpoint.
 */
export async function stackAtEndpoint(
  url: string,
  stack: string,
  region = process.env.AWS_REGION ?? ENDPOINT_DEFAULT_REGION,
): Promise<ClientConnection['endpoints']> {
  const endpoint = endpointUrl(url).origin;
  const cloudFormation = new CloudFormationClient({ endpoint, region, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  try {
    const resolved = await resolveStack(cloudFormation, stack, region);
    return { ...resolved, stepFunctionsEndpoint: endpoint, dynamodbEndpoint: endpoint, schedulerEndpoint: endpoint };
  } catch (err) {
    throw new ControlPlaneUnreachableError(
      endpoint,
      `it is no \`rollout serve\` (no ${DISCOVERY_PATH}), nor an AWS endpoint describing stack ${stack} (LocalStack after a cdklocal deploy; --stack NAME): ${describeError(err)}`,
      { cause: err },
    );
  } finally {
    cloudFormation.destroy();
  }
}

function endpointUrl(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new InvalidInputError('endpoint', [{ field: '--endpoint', message: `must be a URL (http://host:port), got '${url}'` }]);
  }
}

/** The stack outputs the client needs (infra/rollout-stack.ts declares them). */
export const STACK_OUTPUTS = {
  rollingUpgrade: 'RollingUpgradeStateMachineArn',
  groupDeployment: 'GroupDeploymentStateMachineArn',
  taskGraph: 'TaskGraphStateMachineArn',
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
  // Optional: a stack deployed before schedules (or task graphs) existed still serves sessions.
  const scheduleGroup = outputs.get(STACK_OUTPUTS.scheduleGroup);
  const taskGraph = outputs.get(STACK_OUTPUTS.taskGraph);
  const schedulerRoleArn = outputs.get(STACK_OUTPUTS.schedulerRoleArn);
  return {
    region,
    ...(scheduleGroup ? { scheduleGroup } : {}),
    ...(schedulerRoleArn ? { schedulerRoleArn } : {}),
    tableName: output(STACK_OUTPUTS.tableName),
    stateMachines: {
      rollingUpgrade: output(STACK_OUTPUTS.rollingUpgrade),
      groupDeployment: output(STACK_OUTPUTS.groupDeployment),
      ...(taskGraph ? { taskGraph } : {}),
    },
  };
}
