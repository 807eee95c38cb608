import { performance } from 'node:perf_hooks';
import { Option, type Command } from 'commander';
import { parseNodeNameList, planDeployment, selectDeploymentStrategy } from '../../core/group-deployment';
import { parseDeploymentRequest } from '../../core/group-deployment/deployment-request';
import { causeMessage } from '../../control-plane/execution-cause';
import { DEFAULT_TIME_SCALE } from '../../local/open-runtime';
import { addTargetOptions, checkSiteOptions, connectRunTarget, remoteTarget, type TargetOptions } from '../control-plane-target';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { numberOrRaw } from '../option-values';
import { DEPLOYMENT_REQUEST_FLAGS, namingFlags } from '../request-flags';
import { inventoryOf } from '../inventory-from-site';
import { showDeploymentProgress } from '../deployment-progress';
import { renderDeploymentSummary } from '../deployment-summary';
import { loadSiteSource, writeSiteState, type SiteSourceOptions } from '../site-source';
import type { SiteSource } from '../../local/open-runtime';
import type { ControlPlane } from '../../control-plane/control-plane';
import { isDeploymentEnded } from '../../ports/deployment-store';
import { loadStrategyFile } from '../strategy-file';
import { checkDetach, handleInterrupts, reportDetached } from '../run-control';
import { addTaskSelectionOptions } from '../graph-file';
import { groupTaskRuns, renderGroupTaskRuns, runTaskGraphDeploy, taskRunRequestOf, type TaskGraphDeployOptions } from './deploy-tasks';

interface DeployOptions extends SiteSourceOptions, TargetOptions, TaskGraphDeployOptions {
  strategy?: string;
  nodes?: string;
  maxParallelGroups?: string;
  prepareTimeout?: string;
  deployTimeout?: string;
  pollInterval?: string;
  timeScale?: string;
  json?: boolean;
  siteStateOut?: string;
  dataDir?: string;
  detach?: boolean;
}

export function registerDeployCommand(program: Command): void {
  const deploy = addTargetOptions(program.command('deploy'))
    .description(
      'Deploy groups of nodes by a DeploymentStrategy (Shipyard model), or run a task graph (Fuel model), on the embedded default against a simulated site or a site profile',
    )
    .option('--site <file>', 'simulated site file (YAML or JSON); not with --endpoint/--aws, whose control plane has its site')
    .addOption(new Option('--site-config <file>', 'site connection profile: run against the services it names; not with --endpoint/--aws').conflicts('site'))
    .addOption(new Option('--strategy <file>', 'DeploymentStrategy (YAML or JSON, whole document or {groups: [...]})').conflicts('nodes'))
    .option('--nodes <names>', "comma-separated node names: one critical group 'default' over just these")
    .option('--max-parallel-groups <n>', 'ready groups that may run at once (default 1, as Shipyard)')
    .option('--prepare-timeout <seconds>', 'longest a site action may take to prepare (default 1800)')
    .option('--deploy-timeout <seconds>', 'longest a site action may take to deploy (default 3600)')
    .option('--poll-interval <seconds>', 'first wait between polls of a site action (default 30)')
    .option(
      '--time-scale <n>',
      `run on the wall clock sped up n times, to watch a run (e.g. ${DEFAULT_TIME_SCALE}); without it, on virtual time: the makespan is the same on any host (--site only: a --site-config site runs on the wall clock, or on the scaled clock of the rollout simulate it names)`,
    )
    .option('--json', 'print the result as one JSON object')
    .option('--site-state-out <file>', "write the simulated site's final state to this file")
    .option('--data-dir <dir>', 'keep deployments on disk here')
    .option('--detach', 'with --endpoint/--aws: start the deployment (or task run) and return at once, printing its id and how to watch, stop or cancel it')
    .option(
      '--graph <file>',
      "task graph (YAML, or JSON by its .json extension): run it over the site's nodes, or, with --strategy, as each group's deploy phase",
    )
    .option('--max-in-transition <n>', 'with --graph: node tasks running at once over all role groups (default 100)')
    .option('--task-timeout <seconds>', 'with --graph: the timeout of a task whose parameters give none (default 3600)');
  addTaskSelectionOptions(deploy, { nodes: false }).action(async (options: DeployOptions) => {
    process.exitCode = await namingFlags(DEPLOYMENT_REQUEST_FLAGS, () => runDeploy(options));
  });
}

async function runDeploy(options: DeployOptions): Promise<number> {
  const graph = options.graph;
  checkDetach(options, remoteTarget(options) !== undefined);
  if (graph !== undefined && options.strategy === undefined) return runTaskGraphDeploy({ ...options, graph });
  const target = remoteTarget(options);
  checkSiteOptions(options, target !== undefined);
  const source = target ? undefined : await loadSiteSource(options);
  if (source?.kind === 'profile' && !source.profile.provisioner) {
    throw new CliError(`site profile ${options.siteConfig}: provisioner: a group deployment needs a provisioner`, ExitCode.invalidInput);
  }
  const strategyFile = options.strategy !== undefined ? await loadStrategyFile(options.strategy) : undefined;
  const nodes = options.nodes !== undefined ? parseNodeNameList(options.nodes) : undefined;
  const taskGraph = graph !== undefined ? await taskRunRequestOf({ ...options, graph }, true, source) : undefined;
  const input: Record<string, unknown> = {
    ...(taskGraph ? { taskGraph } : {}),
    ...(strategyFile ? { strategy: strategyFile.text } : {}),
    ...(nodes ? { nodes } : {}),
    ...Object.fromEntries(
      Object.entries({
        maxParallelGroups: numberOrRaw(options.maxParallelGroups),
        prepareTimeoutSeconds: numberOrRaw(options.prepareTimeout),
        deployTimeoutSeconds: numberOrRaw(options.deployTimeout),
        pollIntervalSeconds: numberOrRaw(options.pollInterval),
      }).filter(([, v]) => v !== undefined),
    ),
  };
  // Everything that can be wrong with the input is found here, before anything starts.
  parseDeploymentRequest(input);
  // The plan needs the site's inventory: here for a local site; a served control plane plans in its workflow.
  if (source) {
    const inventory = await inventoryOf(source);
    planDeployment(selectDeploymentStrategy({ strategy: strategyFile?.text, nodes }, inventory), inventory);
  }
  return runDeploymentWorkflow(options, input, source);
}

/** Where and how a deployment runs and reports: shared by `rollout deploy` and `rollout session resume`. */
export type DeploymentRunOptions = Pick<DeployOptions, 'site' | 'siteConfig' | 'timeScale' | 'json' | 'siteStateOut' | 'dataDir' | 'detach'> & TargetOptions;

/**
 * Runs the group-deployment workflow with `input` (a request, or `{resumeDeploymentId}` to carry a
 * deployment on), shows its progress, and prints the report at the end. Returns the exit code.
 */
export async function runDeploymentWorkflow(options: DeploymentRunOptions, input: Record<string, unknown>, loaded?: SiteSource): Promise<number> {
  const target = remoteTarget(options);
  checkSiteOptions(options, target !== undefined);
  checkDetach(options, target !== undefined);
  const source = target ? undefined : (loaded ?? (await loadSiteSource(options)));

  // One code path: a remote control plane, or the embedded one served in this process, through the SDK.
  const runtime = await connectRunTarget(target, source, options);
  try {
    const startedReal = performance.now();
    const startedSimulated = runtime.now();
    const resumed = typeof input.resumeDeploymentId === 'string' ? input.resumeDeploymentId : undefined;
    if (resumed !== undefined) await checkResumable(runtime, resumed);
    const run = resumed !== undefined ? await runtime.resume('deployment', resumed) : await runtime.run('groupDeployment', input);
    const deploymentId = resumed ?? run.id;
    if (options.detach) return reportDetached({ ...run, id: deploymentId }, options);
    const progress = showDeploymentProgress(runtime, deploymentId);
    const stopListening = handleInterrupts({ kind: 'deployment', id: deploymentId }, runtime, options, target !== undefined);
    const outcome = await run.outcome;
    stopListening();
    await progress.stop();

    if (outcome.status === 'FAILED' && outcome.error === 'InvalidInputError') throw new CliError(causeMessage(outcome), ExitCode.invalidInput);
    if (options.siteStateOut) await writeSiteState(options.siteStateOut, source!, runtime);
    const found = await runtime.session(deploymentId);
    if (found?.kind !== 'deployment')
      throw new CliError(`the workflow ended (${outcome.status}) before creating the deployment: ${causeMessage(outcome)}`, ExitCode.notCompleted);
    const { report } = found;
    // A deployment whose deploy phase runs a task graph (started here or resumed) has a task run per group.
    const taskRuns = await groupTaskRuns(runtime, deploymentId, Object.keys(report.groups));
    const withTasks = Object.keys(taskRuns).length > 0;

    if (options.json) {
      process.stdout.write(`${JSON.stringify(withTasks ? { ...report, taskRuns } : report, null, 2)}\n`);
    } else {
      process.stdout.write(
        `${renderDeploymentSummary(report, {
          realSeconds: (performance.now() - startedReal) / 1000,
          ...(runtime.siteState() ? { simulatedSeconds: (runtime.now() - startedSimulated) / 1000 } : {}),
        })}${renderGroupTaskRuns(taskRuns)}\n`,
      );
    }
    if (outcome.status === 'FAILED' && outcome.error !== 'CriticalGroupFailed') {
      process.stderr.write(`workflow failed: ${outcome.error}: ${causeMessage(outcome)}\n`);
      return ExitCode.notCompleted;
    }
    return report.status === 'SUCCEEDED' ? ExitCode.completed : ExitCode.notCompleted;
  } finally {
    await runtime.close();
  }
}

/** A deployment to resume must exist and not have ended: said here, before any execution starts. */
async function checkResumable(runtime: ControlPlane, deploymentId: string): Promise<void> {
  const found = await runtime.session(deploymentId);
  if (found?.kind !== 'deployment') throw new CliError(`no deployment with id '${deploymentId}'`, ExitCode.notCompleted);
  if (isDeploymentEnded(found.report.status))
    throw new CliError(`deployment ${deploymentId} has ended (${found.report.status}): nothing to resume`, ExitCode.notCompleted);
}
