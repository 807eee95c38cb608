import type { Command } from 'commander';
import { siteEnvironmentsSchema, type Environment, type Release } from '../../core/environments';
import { loadDocumentFile } from '../../adapters/document-file';
import { parseOrThrow } from '../../core/validation';
import { z } from 'zod';
import { assignedNodeSchema, cancelResultSchema, environmentUpgradeReportSchema, removedEnvironmentSchema, startedRunSchema } from '../../api/schemas';
import { environmentSchema, releaseSchema } from '../../core/environments';
import { DEFAULT_STACK } from '../targets';
import { callApi, callApiWithStatus, resolveApiTarget, type ApiTarget, type ApiTargetOptions } from '../api-client';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { numberOrRaw } from '../option-values';
import { renderTable } from '../table';

interface EnvOptions extends ApiTargetOptions {
  json?: boolean;
}

function withTarget(command: Command): Command {
  return command
    .option('--endpoint <url>', 'a `rollout serve` (its first line names it); the REST API it serves is used')
    .option('--api <url>', 'the REST API itself (an API Gateway URL is signed with SigV4)')
    .option('--aws', "the deployed stack's REST API (its ApiUrl output), signed with SigV4 through the default AWS credential chain")
    .option('--stack <name>', `with --aws: the stack name (default ${DEFAULT_STACK})`)
    .option('--region <region>', "with --aws or an API Gateway --api: the region to sign for (default: the credential chain's, or the URL's)")
    .option('--profile <name>', 'with --aws or an API Gateway --api: a named profile of the shared AWS config')
    .option('--json', 'print JSON');
}

type UpgradeReport = z.output<typeof environmentUpgradeReportSchema>;

/** GET /sessions/{id}, which must be an environment upgrade. */
async function environmentUpgradeReport(target: ApiTarget, id: string): Promise<UpgradeReport> {
  const session = await callApi(target, 'GET', `/sessions/${encodeURIComponent(id)}`, undefined, z.looseObject({ kind: z.string() }));
  if (session.kind !== 'EnvironmentUpgradeSession')
    throw new CliError(`session ${id} is not an environment upgrade (see rollout session get)`, ExitCode.invalidInput);
  const checked = environmentUpgradeReportSchema.safeParse(session);
  if (!checked.success) throw new CliError(`unexpected answer from GET /sessions/${id}: ${checked.error.issues[0]?.message ?? ''}`, ExitCode.notCompleted);
  return checked.data;
}

/** A whole positive number for an id option or argument, else exit 2 naming it. */
function wholeId(value: string, name: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new CliError(`${name} must be a positive whole number, got '${value}'`, ExitCode.invalidInput);
  return Number(value);
}

const ENVIRONMENT_HEADER = ['ID', 'NAME', 'RELEASE', 'STATUS', 'NODES', 'SEED OF'];
const environmentRow = (env: Environment) => [
  String(env.id),
  env.name,
  String(env.release_id),
  env.status,
  String(env.nodes.length),
  env.original_cluster_id === undefined ? '' : String(env.original_cluster_id),
];

function print(options: EnvOptions, value: unknown, text: string): void {
  process.stdout.write(options.json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
}

interface UpgradeOptions extends EnvOptions {
  name?: string;
  release?: string;
  controllerRole: string[];
  startingLabel: string;
  upgradingLabel: string;
  failedLabel: string;
  stepSize: string;
  wlm: string;
  pollInterval?: string;
  bootTimeout?: string;
  wait?: boolean;
  pollMs: string;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** The body of POST /environments/{id}/upgrade from the options; the API validates it (422 naming each field). */
function upgradeBody(options: UpgradeOptions): Record<string, unknown> {
  const defined = (entries: Record<string, unknown>) => Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
  return defined({
    name: options.name,
    release_id: options.release === undefined ? undefined : wholeId(options.release, '--release'),
    controller_roles: options.controllerRole.length > 0 ? options.controllerRole : undefined,
    rolling_upgrade: defined({
      startingLabel: options.startingLabel,
      upgradingLabel: options.upgradingLabel,
      failedLabel: options.failedLabel,
      upgradeStepSize: numberOrRaw(options.stepSize),
      workloadManagerType: options.wlm,
      pollIntervalSeconds: numberOrRaw(options.pollInterval),
      bootTimeoutSeconds: numberOrRaw(options.bootTimeout),
    }),
  });
}

const upgradeLine = (report: UpgradeReport) => {
  const child = (label: string, run: UpgradeReport['rollingUpgrades']['controllers']) =>
    run
      ? `	${label} ${run.state ?? 'starting'}${run.counts ? ` (${run.counts.UPGRADED} upgraded, ${run.counts.FAILED} failed of ${run.nodes.length})` : ''}`
      : '';
  return (
    `environment upgrade ${report.upgradeId}: environment ${report.environmentId}${report.seedId === undefined ? '' : ` -> seed ${report.seedId}`}` +
    `	${report.state}	${report.progress.phase}${child('controllers', report.rollingUpgrades.controllers)}${child('nodes', report.rollingUpgrades.nodes)}`
  );
};

/** `rollout env`: Fuel's environments and their upgrade seeds, as a client of the REST API; one small function per subcommand. */
export function registerEnvCommands(program: Command): void {
  const env = program
    .command('env')
    .description(
      "Environments and Fuel's upgrade seeds (clone, assign, the side-by-side upgrade), through the REST API of a `rollout serve` (--endpoint) or given (--api)",
    );
  for (const register of [
    registerList,
    registerGet,
    registerClone,
    registerAssign,
    registerUpgrade,
    registerImport,
    registerRemove,
    registerDelete,
    registerStatus,
  ])
    register(env);
}

function registerList(env: Command): void {
  withTarget(env.command('list'))
    .description('List environments (generated attributes masked)')
    .action(async (options: EnvOptions) => {
      const environments = await callApi(await resolveApiTarget(options), 'GET', '/environments', undefined, z.array(environmentSchema));
      print(options, environments, environments.length === 0 ? 'no environments' : renderTable(ENVIRONMENT_HEADER, environments.map(environmentRow)));
    });
}

function registerGet(env: Command): void {
  withTarget(env.command('get'))
    .description('Show one environment: attributes (generated ones masked) and nodes')
    .argument('<id>', 'environment id')
    .action(async (id: string, options: EnvOptions) => {
      const environment = await callApi(
        await resolveApiTarget(options),
        'GET',
        `/environments/${wholeId(id, 'the environment id')}`,
        undefined,
        environmentSchema,
      );
      const nodes = renderTable(
        ['NODE', 'NAME', 'ROLES', 'IP', 'MAC'],
        environment.nodes.map((n) => [String(n.id), n.name, n.roles.join(','), n.ip, n.mac]),
      );
      print(options, environment, `${renderTable(ENVIRONMENT_HEADER, [environmentRow(environment)])}\n\n${nodes}`);
    });
}

function registerClone(env: Command): void {
  withTarget(env.command('clone'))
    .description("Create the environment's upgrade seed on a newer release (attributes copied and upgraded)")
    .argument('<id>', 'the original environment id')
    .requiredOption('--name <name>', 'name of the seed')
    .requiredOption('--release <id>', 'the release to upgrade to')
    .action(async (id: string, options: EnvOptions & { name: string; release: string }) => {
      const body = { name: options.name, release_id: wholeId(options.release, '--release') };
      const seed = await callApi(
        await resolveApiTarget(options),
        'POST',
        `/environments/${wholeId(id, 'the environment id')}/upgrade/clone`,
        body,
        environmentSchema,
      );
      print(options, seed, `created upgrade seed ${seed.id} '${seed.name}' (release ${seed.release_id}) of environment ${seed.original_cluster_id}`);
    });
}

function registerAssign(env: Command): void {
  withTarget(env.command('assign'))
    .description("Move a node of the seed's original environment into the seed, with its id, roles and addresses")
    .argument('<seed-id>', 'the upgrade seed id')
    .requiredOption('--node <id>', 'the node id')
    .action(async (seedId: string, options: EnvOptions & { node: string }) => {
      const body = { node_id: wholeId(options.node, '--node') };
      const node = await callApi(
        await resolveApiTarget(options),
        'POST',
        `/environments/${wholeId(seedId, 'the seed id')}/upgrade/assign`,
        body,
        assignedNodeSchema,
      );
      print(options, node, `assigned node ${node.id} (${node.name}, ${node.roles.join(',')}, ${node.ip}) to environment ${node.cluster_id}`);
    });
}

function registerUpgrade(env: Command): void {
  withTarget(env.command('upgrade'))
    .description(
      'Upgrade the environment side by side, as one workflow: clone the seed (unless it has one), assign and reimage the controllers, then roll the other nodes',
    )
    .argument('<id>', 'the environment id')
    .option('--name <name>', 'name of the upgrade seed to clone (when the environment has none)')
    .option('--release <id>', 'the release to upgrade to (when the environment has no seed); its bootTemplate reimages the nodes')
    .option('--controller-role <role>', "nodes with this role are the controllers (repeatable; default 'controller')", collect, [])
    .requiredOption('--starting-label <label>', "group the upgrade fills with each phase's nodes (it may hold only the environment's)")
    .requiredOption('--upgrading-label <label>', 'group that holds the nodes being booted')
    .requiredOption('--failed-label <label>', 'group that receives nodes that failed')
    .requiredOption('--step-size <n>', 'other nodes per step (the controllers go in one step)')
    .option('--wlm <type>', 'workload manager type', 'slurm')
    .option('--poll-interval <seconds>', 'how often the workflows poll the site (default 30)')
    .option('--boot-timeout <seconds>', 'longest wait for a step to boot (default 3600)')
    .option('--wait', 'follow the upgrade until it ends; exit 0 only if it completed')
    .option('--poll-ms <ms>', 'with --wait: real milliseconds between two reads of the session', '500')
    .action(upgradeEnvironment);
}

async function upgradeEnvironment(id: string, options: UpgradeOptions): Promise<void> {
  const target = await resolveApiTarget(options);
  const started = await callApi(target, 'POST', `/environments/${wholeId(id, 'the environment id')}/upgrade`, upgradeBody(options), startedRunSchema);
  if (!options.wait) {
    print(options, started, `started environment upgrade ${started.id} of environment ${id} (GET /sessions/${started.id})`);
    return;
  }
  const report = await followUpgrade(target, started.id, wholeId(options.pollMs, '--poll-ms'), options.json === true);
  print(options, report, [upgradeLine(report), ...report.messages.map((m) => `  ${m}`)].join('\n'));
  process.exitCode = report.state === 'READY' ? ExitCode.completed : ExitCode.notCompleted;
}

function registerImport(env: Command): void {
  withTarget(env.command('import'))
    .description(
      "Register releases and environments (a site file's `releases` and `environments`, YAML or JSON) through the API: for a stack or a --site-config serve, which have no site file to seed from",
    )
    .argument('<file>', 'a file with `releases` and `environments`, as the site file declares them')
    .action(importEnvironments);
}

async function importEnvironments(file: string, options: EnvOptions): Promise<void> {
  const declared = await loadEnvironmentsFile(file);
  const target = await resolveApiTarget(options);
  // Releases first, then originals before their seeds: each names only what is registered before it.
  const environments = [...declared.environments].sort((a, b) => Number(a.original_cluster_id !== undefined) - Number(b.original_cluster_id !== undefined));
  const items: { label: string; path: string; body: Release | Environment; schema: z.ZodType }[] = [
    ...declared.releases.map((release) => ({ label: `release ${release.id}`, path: '/releases', body: release, schema: releaseSchema })),
    ...environments.map((environment) => ({ label: `environment ${environment.id}`, path: '/environments', body: environment, schema: environmentSchema })),
  ];
  const lines: string[] = [];
  let refused = 0;
  for (const item of items) {
    try {
      const answer = await callApiWithStatus(target, 'POST', item.path, item.body, item.schema);
      lines.push(`${item.label}: ${answer.status === 201 ? 'registered' : 'unchanged'}`);
    } catch (err) {
      if (!(err instanceof CliError)) throw err;
      refused++;
      lines.push(`${item.label}: refused: ${err.message}`);
    }
  }
  print(options, { registered: items.length - refused, refused, lines }, lines.join('\n'));
  if (refused > 0) process.exitCode = ExitCode.notCompleted;
}

function registerRemove(env: Command): void {
  withTarget(env.command('remove'))
    .description("Delete an environment (DELETE /environments/{id}, Fuel's cluster delete): its nodes leave it and can be registered again, its name is free")
    .argument('<id>', 'the environment id')
    .action(async (id: string, options: EnvOptions) => {
      const removed = await callApi(
        await resolveApiTarget(options),
        'DELETE',
        `/environments/${wholeId(id, 'the environment id')}`,
        undefined,
        removedEnvironmentSchema,
      );
      print(options, removed, `environment ${removed.id} removed: its nodes and its name are free`);
    });
}

function registerDelete(env: Command): void {
  withTarget(env.command('delete'))
    .description(
      'Delete an environment upgrade (DELETE /sessions/{id}): a running one stops, its rolling upgrade applying the CRUS deletion rules; one that has ended is removed',
    )
    .argument('<session-id>', 'the environment upgrade id')
    .action(async (sessionId: string, options: EnvOptions) => {
      const target = await resolveApiTarget(options);
      // Only an environment upgrade: a rolling upgrade session is deleted with rollout session cancel.
      await environmentUpgradeReport(target, sessionId);
      const result = await callApi(target, 'DELETE', `/sessions/${encodeURIComponent(sessionId)}`, undefined, cancelResultSchema);
      const text = result.removed
        ? `environment upgrade ${sessionId} removed (it had ended ${result.state})`
        : `environment upgrade ${sessionId}: ${result.state} (it stops by the deletion rules; rollout env status follows it)`;
      print(options, result, text);
    });
}

function registerStatus(env: Command): void {
  withTarget(env.command('status'))
    .description('Show an environment upgrade: its phase, its rolling upgrades and its messages')
    .argument('<session-id>', 'the environment upgrade id')
    .action(async (sessionId: string, options: EnvOptions) => {
      const report = await environmentUpgradeReport(await resolveApiTarget(options), sessionId);
      print(options, report, [upgradeLine(report), ...report.messages.map((m) => `  ${m}`)].join('\n'));
    });
}

/** Reads the session until its phase is COMPLETE or FAILED, printing each new phase to stderr (unless --json). */
async function followUpgrade(target: ApiTarget, id: string, pollMs: number, quiet: boolean): Promise<UpgradeReport> {
  let phase: string | undefined;
  for (;;) {
    const report = await environmentUpgradeReport(target, id);
    if (report.progress.phase !== phase && !quiet) process.stderr.write(`${report.progress.phase}\n`);
    phase = report.progress.phase;
    if (phase === 'COMPLETE' || phase === 'FAILED') return report;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** A file of releases and environments, checked as the site file checks them (exit 2 naming each field). */
async function loadEnvironmentsFile(path: string) {
  const subject = `environments file ${path}`;
  const document = await loadDocumentFile(path, subject);
  const value = document !== null && typeof document === 'object' ? (document as Record<string, unknown>) : {};
  // A whole site file works too: only its releases and environments are read.
  return parseOrThrow(siteEnvironmentsSchema, { releases: value['releases'], environments: value['environments'] }, subject);
}
