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
import type { TaskRunView } from '../../control-plane/reports/task-run-report';
import { taskRunViewJson } from '../../control-plane/reports/view-json';
import type { ControlPlane } from '../../control-plane/control-plane';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { readGraphFile, taskSelectionOf, type TaskSelectionOptions } from '../graph-file';
import { inventoryOf } from '../inventory-from-site';
import { numberOrRaw } from '../option-values';
import { showTaskRunProgress } from '../task-run-progress';
import { renderTaskRunSummary } from '../task-run-summary';
import { runWorkflow, type RunOptions, type RunTarget, type WorkflowRun } from '../run-workflow';
import { canResume } from '../../control-plane/resume-check';

/** `rollout deploy --graph`'s own options, beside the site, target and output options deploy has. */
export interface TaskGraphDeployOptions extends RunOptions, TaskSelectionOptions {
  graph?: string;
  maxInTransition?: string;
  taskTimeout?: string;
  pollInterval?: string;
}

/**
 * The task run request the options give (the TaskGraph workflow's input, or a group deployment's
 * `taskGraph`), not yet parsed, and its graph, read and validated from its file (problems name the file).
 * `forGroups`: the nodes come from the strategy, so `--nodes` is not the graph's.
 */
export async function taskRunRequestOf(
  options: TaskGraphDeployOptions & { graph: string },
  forGroups: boolean,
  source?: SiteSource,
): Promise<{ input: TaskRunRequestInput; graph: TaskGraph }> {
  const { request: graph, graph: parsedGraph } = await readGraphFile(options.graph);
  refuseCommandsWithoutTransport(parsedGraph, source);
  const selection = taskSelectionOf(forGroups ? { ...options, nodes: undefined } : options);
  const input: TaskRunRequestInput = {
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
  return { input, graph: parsedGraph };
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
export async function runTaskGraphDeploy(options: TaskGraphDeployOptions & { graph: string }, target: RunTarget): Promise<number> {
  const { input, graph } = await taskRunRequestOf(options, false, target.source);
  // Parsed once, here (the graph read from its file above): bad input stops before anything starts.
  const parsed = parseTaskRunRequest(input, undefined, graph);
  // The plan needs the inventory: checked here for a local site (unknown nodes, an empty selection); a served control plane plans in its workflow.
  if (target.source) requireTaskRuns(planTaskGraph(parsed.graph, taskGraphNodes(await inventoryOf(target.source)), parsed.selection));
  return runWorkflow(options, target, taskGraphRun({ workflow: 'taskGraph', input: parsed.request }));
}

/**
 * The TaskGraph workflow as the run skeleton follows it: a new run, or `{resume}` to carry one on from
 * the store after its process died or it was stopped. It says the run's id at once (on stderr:
 * `rollout session` finds it by it). Ctrl-C stops the run (no task starts after it, tasks in flight
 * finish, it ends STOPPED and `rollout session resume` carries it on; a client detaches).
 */
export function taskGraphRun(start: WorkflowRun['start']): WorkflowRun {
  return {
    kind: 'tasks',
    start,
    // A STOPPED run waits for its resume; the others have ended.
    resumable: canResume,
    announce: (id, resumed, remote, getCommand) =>
      `task run ${id} ${resumed ? 'resumed' : 'started'} (${getCommand ? `${getCommand}; ` : ''}Ctrl-C ${remote ? 'detaches' : 'stops it'})`,
    showProgress: (controlPlane, id) => showTaskRunProgress(controlPlane, id),
    runFailedError: 'TaskRunFailed',
    endedRun: async (controlPlane, id) => {
      const view = await controlPlane.taskRun(id);
      if (!view) return undefined;
      return { json: taskRunViewJson(view), summary: (timing) => renderTaskRunSummary(view, timing), succeeded: view.status === 'SUCCEEDED' };
    },
  };
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
