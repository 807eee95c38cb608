import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/** One Lambda bundle of the synthesized stack: its size and what importing it costs a cold start. */
export interface BundleFigures {
  dir: string;
  /** The handlers (`index.<Name>`) of the functions that run it. */
  handlers: string[];
  bytes: number;
  gzipBytes: number;
  sourceMapBytes: number;
  /** Median over `runs` fresh `node` processes of the time to import the bundle (Lambda's init phase: module load). */
  importMsMedian: number;
  /**
   * Median time from the start of the import to the end of a first invocation that reaches no network
   * (the probe below): import, then what the handlers build on first use (clients, site connectors),
   * the cold start a first invocation pays. Undefined when no handler of the bundle has a probe.
   */
  firstInvocationMsMedian?: number;
  runs: number;
}

/**
 * A first invocation that builds everything a handler builds and fails before any call leaves the
 * host: input refused by the activity's own validation, an API path that does not exist, or (an
 * activity that reads its session first) its first DynamoDB request refused by the closed port below.
 */
const PROBES: Readonly<Record<string, unknown>> = {
  'index.OpenSession': { input: {}, executionId: 'arn:aws:states:us-east-1:000000000000:execution:probe:cold' },
  'index.StartDeployment': { input: { maxParallelGroups: 0 }, executionId: 'arn:aws:states:us-east-1:000000000000:execution:probe:cold' },
  'index.OpenTaskRun': { input: {}, executionId: 'arn:aws:states:us-east-1:000000000000:execution:probe:cold' },
  'index.OpenEnvironmentUpgrade': { input: {}, executionId: 'arn:aws:states:us-east-1:000000000000:execution:probe:cold' },
  'index.handler': {
    httpMethod: 'GET',
    path: '/no/such/path',
    resource: '/{proxy+}',
    headers: {},
    queryStringParameters: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {},
  },
};

/**
 * What the functions find in their environment (no secrets, no bus). Every AWS endpoint is a closed
 * loopback port, tried once: a probe that gets as far as its first DynamoDB call pays for building and
 * sending it, and not for a DNS lookup that this host cannot answer.
 */
const PROBE_ENVIRONMENT = {
  AWS_REGION: 'us-east-1',
  AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
  AWS_MAX_ATTEMPTS: '1',
  AWS_ACCESS_KEY_ID: 'probe',
  AWS_SECRET_ACCESS_KEY: 'probe',
  TABLE_NAME: 'rollout',
  WORKLOAD_MANAGER_URL: 'http://127.0.0.1:9',
  BOOT_SERVICE_URL: 'http://127.0.0.1:9',
  INVENTORY_URL: 'http://127.0.0.1:9',
  PROVISIONER_URL: 'http://127.0.0.1:9',
  ROLLING_UPGRADE_STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:000000000000:stateMachine:RollingUpgrade',
  GROUP_DEPLOYMENT_STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:000000000000:stateMachine:GroupDeployment',
  POWERTOOLS_LOG_LEVEL: 'CRITICAL',
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/**
 * The bundles of a `cdk synth` (`npm run synth` first): cdk.out/asset.*, labelled by the handlers of the
 * template's functions that use each. Imported from where they lie, so that an external `@aws-sdk/*` resolves
 * from the project's node_modules, as it resolves from the runtime's on Lambda.
 */
export function measureBundles(cdkOut: string, runs = 7): BundleFigures[] {
  if (!existsSync(cdkOut)) throw new Error(`${cdkOut} not found: run \`npm run synth\` first`);
  const handlers = new Map<string, string[]>();
  for (const file of readdirSync(cdkOut).filter((f) => f.endsWith('.template.json'))) {
    const template = JSON.parse(readFileSync(path.join(cdkOut, file), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties?: { Handler?: string }; Metadata?: Record<string, string> }>;
    };
    for (const resource of Object.values(template.Resources)) {
      const asset = resource.Metadata?.['aws:asset:path'];
      if (resource.Type !== 'AWS::Lambda::Function' || !asset || !resource.Properties?.Handler) continue;
      handlers.set(asset, [...(handlers.get(asset) ?? []), resource.Properties.Handler]);
    }
  }
  const dirs = readdirSync(cdkOut).filter((d) => d.startsWith('asset.') && existsSync(path.join(cdkOut, d, 'index.mjs')));
  return dirs.map((dir) => {
    const bundle = path.join(cdkOut, dir, 'index.mjs');
    const probed = (handlers.get(dir) ?? []).find((handler) => handler in PROBES);
    const imports: number[] = [];
    const firsts: number[] = [];
    for (let i = 0; i < runs; i++) {
      // One fresh process per run, as a new Lambda container: the import, then (if probed) the first invocation.
      const invoke = probed ? `try { await module[${JSON.stringify(probed.slice('index.'.length))}](${JSON.stringify(PROBES[probed])}, {}); } catch {}` : '';
      const script = `const t = performance.now(); const module = await import(${JSON.stringify(path.resolve(bundle))}); const loaded = performance.now() - t; ${invoke} process.stdout.write(JSON.stringify([loaded, performance.now() - t]));`;
      const out = execFileSync(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], {
        encoding: 'utf8',
        env: { ...process.env, ...PROBE_ENVIRONMENT },
      });
      const [loaded, first] = JSON.parse(out.slice(out.lastIndexOf('['))) as [number, number];
      imports.push(loaded);
      firsts.push(first);
    }
    const map = `${bundle}.map`;
    return {
      dir,
      handlers: handlers.get(dir) ?? [],
      bytes: statSync(bundle).size,
      gzipBytes: gzipSync(readFileSync(bundle), { level: 9 }).length,
      sourceMapBytes: existsSync(map) ? statSync(map).size : 0,
      importMsMedian: median(imports),
      ...(probed ? { firstInvocationMsMedian: median(firsts) } : {}),
      runs,
    };
  });
}

export function renderBundleFigures(cdkOut: string, bundles: readonly BundleFigures[]): string {
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
  return [
    `Lambda bundles in ${cdkOut} (import time: median of fresh node ${process.version} processes on this host)`,
    ...bundles.map((b) =>
      [
        `  ${b.handlers[0] ?? b.dir} and ${Math.max(0, b.handlers.length - 1)} more (${b.dir.slice(0, 18)}…)`,
        `    index.mjs                      ${kb(b.bytes)} (${kb(b.gzipBytes)} gzipped), source map ${kb(b.sourceMapBytes)}`,
        `    import (cold-start init)       ${b.importMsMedian.toFixed(0)} ms (median of ${b.runs})`,
        ...(b.firstInvocationMsMedian !== undefined
          ? [`    import + first invocation      ${b.firstInvocationMsMedian.toFixed(0)} ms (median of ${b.runs})`]
          : []),
      ].join('\n'),
    ),
  ].join('\n');
}
