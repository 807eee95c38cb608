import { performance } from 'node:perf_hooks';
import { COMMAND_TASK_TYPES } from '../../adapters/site/tasks/node-commands';
import {
  groupTaskRunId,
  parseTaskRunRequest,
  planTaskGraph,
  requireTaskRuns,
  taskGraphNodes,
  type TaskGraph,
  type TaskRunRequestInput,
} from '../../core/task-graph';
import type { SiteSource } from '../../local/open-runtime';
import { causeMessage } from '../../control-plane/execution-cause';
import type { TaskRunView } from '../../control-plane/reports/task-run-report';
import type { ControlPlane } from '../../control-plane/control-plane';
import { checkSiteOptions, connectRunTarget, remoteTarget, type TargetOptions } from '../control-plane-target';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { readGraphFile, taskSelectionOf, type TaskSelectionOptions } from '../graph-file';
import { inventoryOf } from '../inventory-from-site';
import { numberOrRaw } from '../option-values';
import { loadSiteSource, writeSiteState, type SiteSourceOptions } from '../site-source';
import { showTaskRunProgress } from '../task-run-progress';
import { renderTaskRunSummary } from '../task-run-summary';
import { handleInterrupts, reportDetached } from '../run-control';

/** `rollout deploy --graph`'s own options, beside the site, target and output options deploy has. */
export interface TaskGraphDeployOptions extends SiteSourceOptions, TargetOptions, TaskSelectionOptions {
  graph?: string;
  maxInTransition?: string;
  taskTimeout?: string;
  pollInterval?: string;
  timeScale?: string;
  json?: boolean;
  siteStateOut?: string;
  dataDir?: string;
  detach?: boolean;
}

/**
 * The task run request the options give (the TaskGraph workflow's input, or a group deployment's
 * `taskGraph`), checked as the workflow checks it: bad input stops here, naming the field.
 * `forGroups`: the nodes come from the strategy, so `--nodes` is not the graph's.
 */
export async function taskRunRequestOf(
  options: TaskGraphDeployOptions & { graph: string },
  forGroups: boolean,
  source?: SiteSource,
): Promise<TaskRunRequestInput> {
  const { request: graph, graph: parsedGraph } = await readGraphFile(options.graph);
  refuseCommandsWithoutTransport(parsedGraph, source);
  const selection = taskSelectionOf(forGroups ? { ...options, nodes: undefined } : options);
  const request: TaskRunRequestInput = {
    graph: graph as TaskRunRequestInput['graph'],
    selection: selection as TaskRunRequestInput['selection'],
    ...Object.fromEntries(
      Object.entries({
        maxInTransition: numberOrRaw(options.maxInTransition),
        taskTimeoutSeconds: numberOrRaw(options.taskTimeout),
        ...(forGroups ? {} : { pollIntervalSeconds: numberOrRaw(options.pollInterval) }),
      }).filter(([, v]) => v !== undefined),
    ),
  };
  parseTaskRunRequest(request);
  return request;
}

/** A profile that names no transport reaches no node's shell: its command tasks are refused here, before a group prepares for nothing. */
function refuseCommandsWithoutTransport(graph: TaskGraph, source: SiteSource | undefined): void {
  if (source?.kind !== 'profile' || source.profile.tasks?.transport || source.profile.transport) return;
  const commands = graph.tasks.filter((task) => COMMAND_TASK_TYPES.includes(task.type));
  if (commands.length === 0) return;
  throw new CliError(
    `site profile: tasks.transport: the graph's ${commands.map((t) => `${t.type} task ${t.id}`).join(', ')} run commands on the nodes, and the profile names no transport to reach them (tasks.transport or transport)`,
    ExitCode.invalidInput,
  );
}

/** `rollout deploy --graph FILE` without a strategy: the TaskGraph workflow over the site's nodes. Returns the exit code. */
export async function runTaskGraphDeploy(options: TaskGraphDeployOptions & { graph: string }): Promise<number> {
  const target = remoteTarget(options);
  checkSiteOptions(options, target !== undefined);
  const source = target ? undefined : await loadSiteSource(options);
  const request = await taskRunRequestOf(options, false, source);
  // The plan needs the inventory: checked here for a local site (unknown nodes, an empty selection); a served control plane plans in its workflow.
  if (source) {
    const parsed = parseTaskRunRequest(request);
    requireTaskRuns(planTaskGraph(parsed.graph, taskGraphNodes(await inventoryOf(source)), parsed.selection));
  }
  return runTaskGraphWorkflow(options, request, source);
}

/**
 * Runs the TaskGraph workflow with `input` (a request, or `{resumeRunId}` to carry a run on from the
 * store after its process died or it was stopped), says the run's id at once (on stderr: `rollout session`
 * finds it by it), shows its progress, and prints the run at the end. Ctrl-C stops the run (no task starts after
 * it, tasks in flight finish, it ends STOPPED and `rollout session resume` carries it on; a client detaches); a second
 * Ctrl-C leaves at once. Returns the exit code.
 */
export async function runTaskGraphWorkflow(
  options: TaskGraphDeployOptions,
  input: TaskRunRequestInput | { resumeRunId: string },
  loaded?: SiteSource,
): Promise<number> {
  const target = remoteTarget(options);
  checkSiteOptions(options, target !== undefined);
  const source = target ? undefined : (loaded ?? (await loadSiteSource(options)));
  const runtime = await connectRunTarget(target, source, options);
  try {
    const startedReal = performance.now();
    const startedSimulated = runtime.now();
    const resumed = 'resumeRunId' in input ? input.resumeRunId : undefined;
    if (resumed !== undefined) await checkResumable(runtime, resumed);
    const run = resumed !== undefined ? await runtime.resume('tasks', resumed) : await runtime.run('taskGraph', input);
    if (options.detach) return reportDetached(run, options);
    const runId = resumed ?? run.id;
    process.stderr.write(
      `task run ${runId} ${resumed !== undefined ? 'resumed' : 'started'} (rollout session get ${runId}; Ctrl-C ${target ? 'detaches' : 'stops it'})\n`,
    );
    const progress = showTaskRunProgress(runtime, runId);
    const stopListening = handleInterrupts({ kind: 'tasks', id: runId }, runtime, options, target !== undefined);
    const outcome = await run.outcome;
    stopListening();
    await progress.stop();
    if (outcome.status === 'FAILED' && outcome.error === 'InvalidInputError') throw new CliError(causeMessage(outcome), ExitCode.invalidInput);
    if (options.siteStateOut) await writeSiteState(options.siteStateOut, source!, runtime);
    const view = await runtime.taskRun(runId);
    if (!view) throw new CliError(`the workflow ended (${outcome.status}) before opening the task run: ${causeMessage(outcome)}`, ExitCode.notCompleted);
    if (options.json) process.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
    else {
      const simulated = runtime.siteState() ? { simulatedSeconds: (runtime.now() - startedSimulated) / 1000 } : {};
      process.stdout.write(`${renderTaskRunSummary(view, { realSeconds: (performance.now() - startedReal) / 1000, ...simulated })}\n`);
    }
    if (outcome.status === 'FAILED' && outcome.error !== 'TaskRunFailed') {
      process.stderr.write(`workflow failed: ${outcome.error}: ${causeMessage(outcome)}\n`);
      return ExitCode.notCompleted;
    }
    return view.status === 'SUCCEEDED' ? ExitCode.completed : ExitCode.notCompleted;
  } finally {
    await runtime.close();
  }
}

async function checkResumable(runtime: ControlPlane, runId: string): Promise<void> {
  const found = await runtime.status(runId);
  if (found?.kind !== 'tasks') throw new CliError(`no task run with id '${runId}'`, ExitCode.invalidInput);
  // A STOPPED run waits for its resume; the others have ended.
  if (found.ended && found.state !== 'STOPPED') throw new CliError(`task run ${runId} has ended (${found.state}): nothing to resume`, ExitCode.notCompleted);
}

/** The task runs of a deployment's groups (those whose deploy phase ran the graph), by group. */
export async function groupTaskRuns(
  runtime: Pick<ControlPlane, 'taskRun'>,
  deploymentId: string,
  groups: readonly string[],
): Promise<Record<string, TaskRunView>> {
  const runs: Record<string, TaskRunView> = {};
  for (const group of groups) {
    const view = await runtime.taskRun(groupTaskRunId(deploymentId, group));
    if (view) runs[group] = view;
  }
  return runs;
}

/** Each group's task states after the deployment summary. */
export function renderGroupTaskRuns(runs: Record<string, TaskRunView>): string {
  return Object.entries(runs)
    .map(([group, view]) => `\n${renderTaskRunSummary(view, { title: `Tasks of group ${group}` })}`)
    .join('\n');
}
