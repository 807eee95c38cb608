import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { startServedControlPlane, type ServedControlPlane } from '../../local/serve';
import { parseSiteDefinition } from '../../simulator';

/**
 * The short variant of the `rollout serve` soak (`npm run bench -- --only=soak` runs 100,000 requests
 * against the process and watches its RSS): the same mix of requests against the served control plane
 * in this process, the JS heap measured after a full collection before and after. The local DynamoDB
 * that `rollout serve` used to run (dynalite) kept 853 bytes per Query (measured: 20,000 Queries grew its
 * heap from 17.6 to 34.0 MB), about 1.4 MB per window of 2,000 of these requests, most of which query;
 * a window must now grow the heap by less than half of that (measured: 100 to 270 KB, compiled code and
 * the like).
 */
setFlagsFromString('--expose-gc');
// Bytecode of functions left unused for a while is dropped at some collections: heap figures would jump with it.
setFlagsFromString('--no-flush-bytecode');
const gc = runInNewContext('gc') as () => void;

const heapAfterCollection = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

let served: ServedControlPlane;
let sfn: SFNClient;
let dynamodb: DynamoDBClient;

beforeAll(async () => {
  const site = parseSiteDefinition({
    nodes: [
      { name: 'n01', nid: 1 },
      { name: 'n02', nid: 2 },
    ],
    groups: { compute: ['n01', 'n02'], upgrading: [], failed: [] },
    bootTemplates: ['cos'],
  });
  served = await startServedControlPlane({ site: { kind: 'simulated', definition: site } });
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  sfn = new SFNClient({ endpoint: served.endpoints.stepFunctionsEndpoint, region: 'local', credentials });
  dynamodb = new DynamoDBClient({ endpoint: served.endpoints.dynamodbEndpoint, region: 'local', credentials });
});

afterAll(async () => {
  sfn?.destroy();
  dynamodb?.destroy();
  await served?.close();
});

it('keeps no memory per request: session lists, reports, execution reads and DynamoDB queries', async () => {
  const api = served.endpoints.apiEndpoint;
  const created = await fetch(`${api}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      startingLabel: 'compute',
      upgradingLabel: 'upgrading',
      failedLabel: 'failed',
      upgradeStepSize: 2,
      upgradeTemplateId: 'cos',
      workloadManagerType: 'slurm',
    }),
  });
  expect(created.status).toBe(201);
  const { id, executionArn } = (await created.json()) as { id: string; executionArn: string };
  // The upgrade runs to its end first: what it keeps (its history, records, messages) is not a leak.
  for (let status = 'RUNNING'; status === 'RUNNING'; ) {
    ({ status = 'RUNNING' } = await sfn.send(new DescribeExecutionCommand({ executionArn })));
    if (status === 'RUNNING') await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const list = async () => expect((await fetch(`${api}/sessions`).then(async (r) => [r.status, await r.arrayBuffer()]))[0]).toBe(200);
  const requests: (() => Promise<unknown>)[] = [
    list,
    async () => expect((await fetch(`${api}/sessions/${id}`).then(async (r) => [r.status, await r.arrayBuffer()]))[0]).toBe(200),
    list,
    () => sfn.send(new DescribeExecutionCommand({ executionArn })),
    list,
    () =>
      dynamodb.send(
        new QueryCommand({
          TableName: served.endpoints.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': { S: `SESSION#${id}` } },
        }),
      ),
  ];
  const run = async (count: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < count) await requests[next++ % requests.length]!();
      }),
    );
  };
  // The first requests grow the heap for good (compiled code, the clients' caches): two windows after a
  // warm-up, and the second must not grow as a leak would.
  await run(1_000);
  const start = heapAfterCollection();
  await run(2_000);
  const middle = heapAfterCollection();
  await run(2_000);
  const grown = heapAfterCollection() - middle;
  process.stdout.write(
    `heap grown by ${((middle - start) / 1024).toFixed(0)} KB, then by ${(grown / 1024).toFixed(0)} KB, over two windows of 2,000 requests\n`,
  );
  expect(grown).toBeLessThan(640 * 1024);
}, 300_000);
