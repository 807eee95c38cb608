import { createServer } from 'node:net';
import type { Command } from 'commander';
import { DEFAULT_TIME_SCALE } from '../../local/open-runtime';
import { startServedControlPlane } from '../../local/serve';
import { dataDirForRun } from '../data-dir-option';
import { CliError } from '../errors';
import { numberOrRaw, timeScaleOption } from '../option-values';
import { ExitCode } from '../exit-codes';
import { loadSiteSource, type SiteSourceOptions } from '../site-source';

interface ServeOptions extends SiteSourceOptions {
  port: string;
  apiPort: string;
  dynamodbPort: string;
  dataDir?: string;
  timeScale?: string;
}

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description(
      'Run the embedded control plane as a local service: a Step Functions-compatible endpoint (with an EventBridge Scheduler-compatible one for `rollout schedule`), the DynamoDB endpoint and the REST API (sessions, deployments, environments; GET /openapi.json). ' +
        'The first line on stdout is one JSON object with the endpoints and the state machine ARNs; it runs until SIGINT or SIGTERM.',
    )
    .option('--site <file>', 'simulated site file (YAML or JSON)')
    .option('--site-config <file>', 'site connection profile: serve workflows that drive the services it names')
    .option('--port <n>', 'port of the Step Functions endpoint on 127.0.0.1 (0: any free port)', '0')
    .option('--api-port <n>', 'port of the REST API on 127.0.0.1 (0: any free port)', '0')
    .option('--dynamodb-port <n>', 'port of the DynamoDB endpoint on 127.0.0.1 (0: any free port)', '0')
    .option('--data-dir <dir>', 'keep sessions on disk here (the service owns the directory while it runs)')
    .option(
      '--time-scale <n>',
      `run on the wall clock sped up n times (e.g. ${DEFAULT_TIME_SCALE}), to watch runs; without it, on virtual time: the clock jumps to the next due wait whenever every execution waits`,
    )
    .action(async (options: ServeOptions) => {
      await serve(options);
    });
}

async function serve(options: ServeOptions): Promise<void> {
  const ports = {
    '--port': portOption('--port', options.port),
    '--api-port': portOption('--api-port', options.apiPort),
    '--dynamodb-port': portOption('--dynamodb-port', options.dynamodbPort),
  };
  const timeScale = timeScaleOption(options.timeScale);
  // Before the control plane starts (seconds): a busy port is said at once.
  for (const [option, value] of Object.entries(ports)) {
    if (value !== 0) await portFree(value).catch((err: unknown) => Promise.reject(portInUse(err, { [option]: value }) ?? err));
  }
  const site = await loadSiteSource(options);
  if (site.kind === 'profile' && timeScale !== undefined)
    throw new CliError('--time-scale goes with --site: a real site runs on the wall clock', ExitCode.invalidInput);
  const dataDir = options.dataDir ? await dataDirForRun(options.dataDir) : undefined;
  const served = await startServedControlPlane({
    site,
    port: ports['--port'],
    apiPort: ports['--api-port'],
    dynamoDbPort: ports['--dynamodb-port'],
    ...(timeScale !== undefined ? { timeScale } : {}),
    ...(dataDir ? { dataDir } : {}),
  }).catch((err: unknown) => {
    throw portInUse(err, ports) ?? err;
  });
  const { stepFunctionsEndpoint, dynamodbEndpoint, region, stateMachines, tableName, apiEndpoint, schedulerEndpoint, scheduleGroup, schedulerRoleArn } =
    served.endpoints;
  process.stdout.write(
    `${JSON.stringify({ stepFunctionsEndpoint, dynamodbEndpoint, region, stateMachines, tableName, apiEndpoint, schedulerEndpoint, scheduleGroup, schedulerRoleArn })}\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  process.stderr.write('stopping the control plane\n');
  await served.close();
}

/** A port option's value: 0-65535 (0: any free port), else exit 2 naming the option. */
function portOption(option: string, raw: string): number {
  const port = numberOrRaw(raw);
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new CliError(`${option} must be a port number (0-65535), got '${raw}'`, ExitCode.invalidInput);
  return port;
}

/** Resolves once `port` could be listened on (and is let go again); rejects with the listen error otherwise. */
function portFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

/** A port another process listens on, as what to do: which option, which port. */
function portInUse(err: unknown, ports: Record<string, number>): CliError | undefined {
  const { code, port } = (err ?? {}) as { code?: unknown; port?: unknown };
  if (code !== 'EADDRINUSE') return undefined;
  const option = Object.entries(ports).find(([, value]) => value === port)?.[0] ?? '--port';
  return new CliError(
    `port ${String(port)} on 127.0.0.1 is already in use (another rollout serve?): stop what listens there, or give another ${option} (${option} 0 takes any free port)`,
    ExitCode.notCompleted,
  );
}
