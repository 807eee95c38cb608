import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectControlPlane, STACK_OUTPUTS } from '../../cli/targets';
import { startServedControlPlane, type ServedControlPlane } from '../../local/serve';
import { runCliInProcess } from '../support/cli';
import { buildSite, upgradeRequest } from '../support/sites';

/**
 * `--endpoint URL` on an endpoint that serves the AWS APIs themselves, as LocalStack does after a
 * `cdklocal deploy`: no discovery route there, so the stack's outputs, read through CloudFormation at
 * that endpoint, name the state machines and the table. The endpoint here is one origin in front of
 * a served control plane: CloudFormation's DescribeStacks (its query protocol, XML) answered with the
 * outputs infra/ declares, Step Functions and DynamoDB requests passed on by their X-Amz-Target.
 */
function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function describeStacksXml(stack: string, outputs: Record<string, string>): string {
  const members = Object.entries(outputs)
    .map(([key, value]) => `<member><OutputKey>${xml(key)}</OutputKey><OutputValue>${xml(value)}</OutputValue></member>`)
    .join('');
  return (
    '<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>' +
    `<StackName>${xml(stack)}</StackName><StackId>arn:aws:cloudformation:us-east-1:000000000000:stack/${xml(stack)}/1</StackId>` +
    `<CreationTime>2026-01-01T00:00:00Z</CreationTime><StackStatus>CREATE_COMPLETE</StackStatus><Outputs>${members}</Outputs>` +
    '</member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></DescribeStacksResponse>'
  );
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('--endpoint on an AWS-API endpoint (LocalStack): the stack outputs through CloudFormation there', () => {
  let served: ServedControlPlane;
  let awsEndpoint: Server;
  let url: string;
  const describedStacks: string[] = [];

  beforeAll(async () => {
    served = await startServedControlPlane({ site: { kind: 'simulated', definition: buildSite(2) } });
    const { stateMachines, tableName, stepFunctionsEndpoint, dynamodbEndpoint } = served.endpoints;
    awsEndpoint = createServer((req, res) => {
      void (async () => {
        const body = await readBody(req);
        const target = String(req.headers['x-amz-target'] ?? '');
        if (req.method === 'POST' && !target) {
          const form = new URLSearchParams(body.toString());
          if (form.get('Action') !== 'DescribeStacks') throw new Error(`unexpected ${form.get('Action')}`);
          const stack = form.get('StackName')!;
          describedStacks.push(stack);
          if (stack !== 'Rollout') {
            res
              .writeHead(400, { 'content-type': 'text/xml' })
              .end(
                `<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${xml(stack)} does not exist</Message></Error></ErrorResponse>`,
              );
            return;
          }
          const outputs = {
            [STACK_OUTPUTS.rollingUpgrade]: stateMachines.rollingUpgrade,
            [STACK_OUTPUTS.groupDeployment]: stateMachines.groupDeployment,
            [STACK_OUTPUTS.taskGraph]: stateMachines.taskGraph!,
            [STACK_OUTPUTS.tableName]: tableName,
          };
          res.writeHead(200, { 'content-type': 'text/xml' }).end(describeStacksXml(stack, outputs));
          return;
        }
        if (!target) {
          res.writeHead(404, { 'content-type': 'text/xml' }).end('<Error><Code>NoSuchBucket</Code></Error>');
          return;
        }
        const upstream = target.startsWith('AWSStepFunctions.') ? stepFunctionsEndpoint : dynamodbEndpoint;
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([name]) => name !== 'host' && name !== 'content-length' && name !== 'connection'),
        ) as Record<string, string>;
        const forwarded = await fetch(upstream, { method: 'POST', headers, body });
        res
          .writeHead(forwarded.status, { 'content-type': forwarded.headers.get('content-type') ?? 'application/json' })
          .end(Buffer.from(await forwarded.arrayBuffer()));
      })().catch((err: unknown) => res.writeHead(500).end(String(err)));
    });
    await new Promise<void>((resolve) => awsEndpoint.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(awsEndpoint.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    awsEndpoint.closeAllConnections();
    await new Promise((resolve) => awsEndpoint.close(resolve));
    await served.close();
  });

  it('connects by the named stack and runs an upgrade through it, as against a rollout serve', async () => {
    const client = await connectControlPlane({ kind: 'endpoint', url, stack: 'Rollout' });
    try {
      const run = await client.run('rollingUpgrade', upgradeRequest({ upgradeStepSize: 2 }));
      expect((await run.outcome).status).toBe('SUCCEEDED');
      // The stack's outputs named the served machine and table: the run is its execution, its session in that table.
      expect(run.executionArn.startsWith(served.endpoints.stateMachines.rollingUpgrade.replace(':stateMachine:', ':execution:'))).toBe(true);
      expect((await client.executions('rollingUpgrade')).map((execution) => execution.executionArn)).toContain(run.executionArn);
      expect(await client.session(run.id)).toMatchObject({ kind: 'upgrade', report: { state: 'READY', completed: true } });
    } finally {
      await client.close();
    }
  });

  it('the CLI takes --endpoint with --stack; a stack that is not there is named in a one-line error', async () => {
    const listed = await runCliInProcess(['session', 'list', '--kind', 'upgrade', '--endpoint', url, '--stack', 'Rollout', '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ state: 'READY' })]);

    const missing = await runCliInProcess(['session', 'list', '--endpoint', url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /is no `rollout serve` .*nor an AWS endpoint describing stack BaremetalRollout.*Stack with id BaremetalRollout does not exist/,
    );
    expect(describedStacks).toEqual(['Rollout', 'Rollout', 'BaremetalRollout']);
  });
});
