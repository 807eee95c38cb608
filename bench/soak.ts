import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { DescribeExecutionCommand, GetExecutionHistoryCommand, ListExecutionsCommand, SFNClient } from '@aws-sdk/client-sfn';

/**
 * `rollout serve` under a long mixed load, as an operator's dashboards and scripts would put on it:
 * a rolling upgrade whose workflow runs `increments` increments (one node's job outlasts that many
 * polls), and meanwhile `requests` requests, a few at a time, of every kind the service answers (REST
 * session lists and reports, Step Functions reads, DynamoDB queries of the sessions), all on
 * loopback. The service's RSS is sampled as it goes: after the warm-up it must stay flat (the local
 * DynamoDB's Query path used to keep ~1 KB per call, and `rollout serve` grew from 175 MB to 1.2 GB).
 */
export interface SoakOptions {
  requests: number;
  /** The workflow's increments (CheckQuiesce polls of the busy node). */
  increments: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** Requests before the baseline RSS is taken. */
  warmupRequests?: number;
  /** The repository root (whose bin/rollout.js is started). */
  root?: string;
}

export interface SoakFigures {
  requests: number;
  failedRequests: number;
  byKind: Record<string, number>;
  wallSeconds: number;
  /** RSS (MB) of the service: after the warm-up, the most after it, and at the end. */
  rssAfterWarmupMb: number;
  rssMaxAfterWarmupMb: number;
  rssEndMb: number;
  /** (max after warm-up - after warm-up) / after warm-up. */
  growth: number;
  samples: { requests: number; rssMb: number }[];
  workflow: { increments: number; status: string };
}

const POLL_SECONDS = 30;

/** Runs the soak against a fresh `rollout serve` and stops it; every address is loopback. */
export async function soakServe(options: SoakOptions): Promise<SoakFigures> {
  const root = options.root ?? process.cwd();
  const concurrency = options.concurrency ?? 8;
  const warmup = options.warmupRequests ?? Math.min(10_000, Math.floor(options.requests / 10));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-soak-'));
  const siteFile = path.join(dir, 'site.yaml');
  // Four nodes; the first runs a job that ends after `increments` polls, so the workflow polls that often.
  await writeFile(
    siteFile,
    [
      'timing: {bootSeconds: 60, returnSeconds: 10}',
      'bootTemplates: [cos]',
      'nodes:',
      `  - {name: n01, nid: 1, wlm: {state: ALLOCATED, busySeconds: ${options.increments * POLL_SECONDS}}}`,
      '  - {name: n02, nid: 2}',
      '  - {name: n03, nid: 3}',
      '  - {name: n04, nid: 4}',
      'groups: {compute: [n01, n02, n03, n04], upgrading: [], failed: []}',
      '',
    ].join('\n'),
  );
  const serve = await startServe(root, ['--site', siteFile]);
  const { apiEndpoint, stepFunctionsEndpoint, dynamodbEndpoint, tableName, stateMachines } = serve.endpoints;
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const sfn = new SFNClient({ endpoint: stepFunctionsEndpoint, region: 'local', credentials });
  const dynamodb = new DynamoDBClient({ endpoint: dynamodbEndpoint, region: 'local', credentials });
  try {
    const created = await fetch(`${apiEndpoint}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        startingLabel: 'compute',
        upgradingLabel: 'upgrading',
        failedLabel: 'failed',
        upgradeStepSize: 4,
        upgradeTemplateId: 'cos',
        workloadManagerType: 'slurm',
        pollIntervalSeconds: POLL_SECONDS,
        quiesceTimeoutSeconds: options.increments * POLL_SECONDS * 2,
      }),
    });
    if (created.status !== 201) throw new Error(`POST /sessions answered ${created.status}: ${await created.text()}`);
    const { id, executionArn } = (await created.json()) as { id: string; executionArn: string };

    const kinds: [string, number, () => Promise<unknown>][] = [
      ['GET /sessions', 35, () => expectOk(fetch(`${apiEndpoint}/sessions`))],
      ['GET /sessions/{id}', 20, () => expectOk(fetch(`${apiEndpoint}/sessions/${id}`))],
      ['DescribeExecution', 15, () => sfn.send(new DescribeExecutionCommand({ executionArn }))],
      ['ListExecutions', 10, () => sfn.send(new ListExecutionsCommand({ stateMachineArn: stateMachines.rollingUpgrade, maxResults: 20 }))],
      ['GetExecutionHistory', 5, () => sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 50, reverseOrder: true }))],
      [
        'DynamoDB Query',
        15,
        () =>
          dynamodb.send(
            new QueryCommand({
              TableName: tableName,
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': { S: `SESSION#${id}` } },
              Limit: 50,
            }),
          ),
      ],
    ];
    const weights = kinds.reduce((sum, [, w]) => sum + w, 0);
    const byKind: Record<string, number> = {};
    let next = 0;
    let failed = 0;
    let rssAfterWarmup = 0;
    const samples: { requests: number; rssMb: number }[] = [];
    const sampleEvery = Math.max(1, Math.floor(options.requests / 100));
    const started = performance.now();
    const worker = async () => {
      for (;;) {
        const n = next++;
        if (n >= options.requests) return;
        // A fixed interleaving of the kinds by weight: the same run every time.
        let pick = (n * 7919) % weights;
        const [name, , send] = kinds.find(([, w]) => (pick -= w) < 0)!;
        byKind[name] = (byKind[name] ?? 0) + 1;
        try {
          await send();
        } catch {
          failed++;
        }
        if (n === warmup) rssAfterWarmup = rssMb(serve.pid);
        if (n % sampleEvery === 0) samples.push({ requests: n, rssMb: rssMb(serve.pid) });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const wallSeconds = (performance.now() - started) / 1000;
    const rssEnd = rssMb(serve.pid);
    samples.push({ requests: options.requests, rssMb: rssEnd });
    const after = samples.filter((s) => s.requests >= warmup).map((s) => s.rssMb);
    const rssMax = Math.max(rssAfterWarmup, ...after);
    const workflow = await waitForWorkflow(sfn, stateMachines.rollingUpgrade);
    return {
      requests: options.requests,
      failedRequests: failed,
      byKind,
      wallSeconds,
      rssAfterWarmupMb: rssAfterWarmup,
      rssMaxAfterWarmupMb: rssMax,
      rssEndMb: rssEnd,
      growth: (rssMax - rssAfterWarmup) / rssAfterWarmup,
      samples,
      workflow,
    };
  } finally {
    sfn.destroy();
    dynamodb.destroy();
    await serve.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function expectOk(response: Promise<Response>): Promise<void> {
  const res = await response;
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`answered ${res.status}`);
}

/** The service's resident set (VmRSS of /proc/PID/status), in MB. */
function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Waits for the upgrade's chain of executions (it continues as new) to end; counts its increments (the Lambda tasks it entered). */
async function waitForWorkflow(sfn: SFNClient, stateMachineArn: string): Promise<{ increments: number; status: string }> {
  const deadline = Date.now() + 10 * 60_000;
  let executions: { executionArn?: string; status?: string }[];
  for (;;) {
    ({ executions = [] } = await sfn.send(new ListExecutionsCommand({ stateMachineArn, maxResults: 100 })));
    if (!executions.some((e) => e.status === 'RUNNING') || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  let increments = 0;
  for (const execution of executions) {
    let nextToken: string | undefined;
    do {
      const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn: execution.executionArn, maxResults: 1000, nextToken }));
      increments += (page.events ?? []).filter((e) => e.type === 'TaskStateEntered').length;
      nextToken = page.nextToken;
    } while (nextToken);
  }
  // Newest first: the chain's last execution.
  return { increments, status: `${executions.length} execution(s), the last ${executions[0]?.status ?? 'unknown'}` };
}

interface ServeProcess {
  pid: number;
  endpoints: { apiEndpoint: string; stepFunctionsEndpoint: string; dynamodbEndpoint: string; tableName: string; stateMachines: { rollingUpgrade: string } };
  stop(): Promise<void>;
}

async function startServe(root: string, args: string[]): Promise<ServeProcess> {
  const child: ChildProcess = spawn(process.execPath, [path.join(root, 'bin/rollout.js'), 'serve', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    void exited.then(() => reject(new Error(`rollout serve ended before its first line: ${stderr}`)));
  });
  lines.close();
  return {
    pid: child.pid!,
    endpoints: JSON.parse(first) as ServeProcess['endpoints'],
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export function renderSoak(f: SoakFigures): string {
  const mb = (x: number) => `${x.toFixed(0)} MB`;
  return [
    `rollout serve soak: ${f.requests.toLocaleString('en')} mixed requests (${Object.entries(f.byKind)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}), ${f.failedRequests} failed, ${f.wallSeconds.toFixed(0)} s wall`,
    `  RSS after warm-up ${mb(f.rssAfterWarmupMb)}, most after it ${mb(f.rssMaxAfterWarmupMb)}, at the end ${mb(f.rssEndMb)}: growth ${(f.growth * 100).toFixed(1)}% (flat: within 20%)`,
    `  RSS by requests: ${f.samples
      .filter((_, i) => i % 10 === 0)
      .map((s) => `${s.requests}: ${s.rssMb.toFixed(0)}`)
      .join(', ')}`,
    `  the workflow: ${f.workflow.increments} increments, ${f.workflow.status}`,
  ].join('\n');
}
