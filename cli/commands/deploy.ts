import { Option, type Command } from 'commander';
import { parseNodeNameList, planDeployment, selectDeploymentStrategy } from '../../core/group-deployment';
import { parseDeploymentRequest } from '../../core/group-deployment/deployment-request';
import { DEFAULT_TIME_SCALE } from '../../local/open-runtime';
import { taskRunViewJson } from '../../control-plane/reports/view-json';
import { addTargetOptions } from '../control-plane-target';
import { addLiveOption } from '../live-display';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { numberOrRaw } from '../option-values';
import { DEPLOYMENT_REQUEST_FLAGS, namingFlags } from '../request-flags';
import { inventoryOf } from '../inventory-from-site';
import { showDeploymentProgress } from '../deployment-progress';
import { renderDeploymentSummary } from '../deployment-summary';
import { loadStrategyFile } from '../strategy-file';
import { runTargetOf, runWorkflow, type WorkflowRun } from '../run-workflow';
import { addTaskSelectionOptions } from '../graph-file';
import { groupTaskRuns, renderGroupTaskRuns, runTaskGraphDeploy, taskRunRequestOf, type TaskGraphDeployOptions } from './deploy-tasks';
import { canResume } from '../../control-plane/resume-check';

interface DeployOptions extends TaskGraphDeployOptions {
  strategy?: string;
  nodes?: string;
  maxParallelGroups?: string;
  prepareTimeout?: string;
  deployTimeout?: string;
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
  addTaskSelectionOptions(addLiveOption(deploy), { nodes: false }).action(async (options: DeployOptions) => {
    process.exitCode = await namingFlags(DEPLOYMENT_REQUEST_FLAGS, () => runDeploy(options));
  });
}

async function runDeploy(options: DeployOptions): Promise<number> {
  const graph = options.graph;
  const target = await runTargetOf(options);
  if (graph !== undefined && options.strategy === undefined) return runTaskGraphDeploy({ ...options, graph }, target);
  const { source } = target;
  if (source?.kind === 'profile' && !source.profile.provisioner) {
    throw new CliError(`site profile ${options.siteConfig}: provisioner: a group deployment needs a provisioner`, ExitCode.invalidInput);
  }
  const strategyFile = options.strategy !== undefined ? await loadStrategyFile(options.strategy) : undefined;
  const nodes = options.nodes !== undefined ? parseNodeNameList(options.nodes) : undefined;
  const taskGraph = graph !== undefined ? await taskRunRequestOf({ ...options, graph }, true, source) : undefined;
  // Parsed once, here (the strategy and the graph read from their files above): everything that can be wrong
  // with the input is found before anything starts, and the typed request is the workflow's input.
  const request = parseDeploymentRequest(
    {
      ...(taskGraph ? { taskGraph: taskGraph.input } : {}),
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
    },
    taskGraph?.graph,
  );
  // The plan needs the site's inventory: here for a local site; a served control plane plans in its workflow.
  if (source) {
    const inventory = await inventoryOf(source);
    planDeployment(strategyFile?.strategy ?? selectDeploymentStrategy({ nodes }, inventory), inventory);
  }
  return runWorkflow(options, target, deploymentRun({ workflow: 'groupDeployment', input: request }));
}

/**
 * The group-deployment workflow as the run skeleton follows it: a new deployment, or `{resume}` to
 * carry one on. Its report adds the task run of each group whose deploy phase ran a task graph.
 */
export function deploymentRun(start: WorkflowRun['start']): WorkflowRun {
  return {
    kind: 'deployment',
    start,
    // A STOPPED deployment waits for its resume; the others have ended.
    resumable: canResume,
    showProgress: (controlPlane, id) => showDeploymentProgress(controlPlane, id),
    runFailedError: 'CriticalGroupFailed',
    endedRun: async (controlPlane, id) => {
      const found = await controlPlane.session(id);
      if (found?.kind !== 'deployment') return undefined;
      const { report } = found;
      // A deployment whose deploy phase runs a task graph (started here or resumed) has a task run per group.
      const taskRuns = await groupTaskRuns(controlPlane, id, Object.keys(report.groups));
      const withTasks = Object.keys(taskRuns).length > 0;
      return {
        json: withTasks ? { ...report, taskRuns: Object.fromEntries(Object.entries(taskRuns).map(([group, run]) => [group, taskRunViewJson(run)])) } : report,
        summary: (timing) => `${renderDeploymentSummary(report, timing)}${renderGroupTaskRuns(taskRuns)}`,
        succeeded: report.status === 'SUCCEEDED',
      };
    },
  };
}
