import { z } from 'zod';
import { InvalidInputError } from '../errors';
import { nodeName } from '../site/names';
import { MAX_DURATION_SECONDS, MAX_POLL_INTERVAL_SECONDS, parseOrThrow, seconds } from '../validation';
import { ITEM_ID_PATTERN } from './graph-document';
import { parseTaskGraph, validateTaskGraph, type TaskGraph } from './parse-task-graph';
import { tasksLeftOut, type TaskSelection } from './selection';

/** Most node tasks one run may have in flight at once: far above any site's parallelism, below what one increment can start. */
export const MAX_IN_TRANSITION = 10_000;

const taskId = (field: string) => z.string({ error: `${field} must be a task id` }).regex(ITEM_ID_PATTERN, `${field} must be a task id`);
const taskIds = (field: string) => z.array(taskId(field), { error: `${field} must be a list of task ids` });

/** Part of the graph, as `fuel node --tasks/--skip/--start/--end` (core/task-graph/selection.ts). */
export const taskSelectionSchema = z.strictObject({
  tasks: taskIds('tasks').optional().describe('Only these tasks (`--tasks a,b`)'),
  skip: taskIds('skip').optional().describe('All but these tasks (`--skip x`); the order through a skipped task is kept'),
  start: taskId('start')
    .optional()
    .describe('This task (or stage), what depends on it, and every later stage (`--start T`); with end, the subgraph between them'),
  end: taskId('end').optional().describe('This task (or stage), what it requires, and every earlier stage (`--end U`); with start, the subgraph between them'),
  nodes: z
    .array(nodeName(), { error: 'nodes must be a list of node names' })
    .min(1, 'nodes must name at least one node')
    .optional()
    .describe('Only these nodes (`--nodes n1,n2`); in a group deployment the groups select the nodes instead'),
});

/** How a task run goes: its global cap, how often it looks at the tasks in flight, and the timeout of a task that names none. */
export const taskRunSettingsShape = {
  /** Global cap: node tasks in TRANSITION at once, over every role group (OpenCrowbar's cap on background jobs). */
  maxInTransition: z
    .number({ error: 'maxInTransition must be a number' })
    .int('maxInTransition must be a whole number')
    .min(1, 'maxInTransition must be at least 1')
    .max(MAX_IN_TRANSITION, `maxInTransition must be at most ${MAX_IN_TRANSITION}`)
    .default(100)
    .describe("Global cap: node tasks in TRANSITION at once, over every role group (OpenCrowbar's cap on background jobs; `--max-in-transition`)"),
  pollIntervalSeconds: seconds('pollIntervalSeconds', { max: MAX_POLL_INTERVAL_SECONDS })
    .default(10)
    .describe('How often the run looks at the tasks in flight, in seconds (`--poll-interval`)'),
  /** The timeout of a task whose parameters give none: a task never runs unbounded. */
  taskTimeoutSeconds: seconds('taskTimeoutSeconds', { max: MAX_DURATION_SECONDS })
    .default(3600)
    .describe('The timeout of a task whose parameters give none (`timeout`): a task never runs unbounded (`--task-timeout`)'),
};

/**
 * A task graph to run: the graph (its YAML or JSON text, or the document itself), the part of it
 * to run, and the run's settings. `rollout deploy --graph` sends it as the TaskGraph workflow's
 * input, or inside a group deployment's request as `taskGraph`.
 */
export const taskRunRequestSchema = z.strictObject({
  graph: z
    .union([z.string().min(1, 'graph must not be empty'), z.array(z.unknown()), z.record(z.string(), z.unknown())], {
      error: 'graph is required: the task graph as YAML or JSON text, or the document itself',
    })
    .describe(
      'The task graph (see Task graph): its YAML or JSON text, or the document itself (the bare list of items, or `{cluster, attributes, tasks}`; `--graph FILE`)',
    ),
  selection: taskSelectionSchema
    .prefault({})
    .describe('The part of the graph to run, as `fuel node --tasks/--skip/--start/--end` (default: all of it, on every node with a role)'),
  ...taskRunSettingsShape,
});

export type TaskRunRequest = z.output<typeof taskRunRequestSchema>;
export type TaskRunRequestInput = z.input<typeof taskRunRequestSchema>;
export type TaskRunSettings = Pick<TaskRunRequest, 'maxInTransition' | 'pollIntervalSeconds' | 'taskTimeoutSeconds'>;

/** The request with its graph read and validated (every problem named by its path), before any node is touched. */
export interface ParsedTaskRunRequest {
  request: TaskRunRequest;
  graph: TaskGraph;
  selection: TaskSelection;
  settings: TaskRunSettings;
}

/**
 * `graphRead`: the request's graph as its caller read and validated it already (the CLI, from its
 * file, each problem naming the file), so that it is not read a second time.
 */
export function parseTaskRunRequest(input: unknown, subject = 'task run request', graphRead?: TaskGraph): ParsedTaskRunRequest {
  const request = parseOrThrow(taskRunRequestSchema, input, subject);
  const graph = graphRead ?? readGraph(request.graph, subject);
  checkSelection(graph, request.selection, subject);
  const { maxInTransition, pollIntervalSeconds, taskTimeoutSeconds } = request;
  return { request, graph, selection: request.selection, settings: { maxInTransition, pollIntervalSeconds, taskTimeoutSeconds } };
}

/** The selection names tasks and stages of this graph (nodes are checked against the site when planned). */
function checkSelection(graph: TaskGraph, selection: TaskSelection, subject: string): void {
  try {
    tasksLeftOut(graph, selection);
  } catch (err) {
    if (!(err instanceof InvalidInputError)) throw err;
    throw new InvalidInputError(
      subject,
      err.problems.map((p) => ({ ...p, field: `selection.${p.field}` })),
      { cause: err },
    );
  }
}

/** Text is YAML (JSON is YAML too); a document is validated as it is. Problems are prefixed `graph.`. */
function readGraph(graph: TaskRunRequest['graph'], subject: string): TaskGraph {
  try {
    return typeof graph === 'string' ? parseTaskGraph(graph, 'yaml', subject) : validateTaskGraph(graph, subject);
  } catch (err) {
    if (!(err instanceof InvalidInputError)) throw err;
    throw new InvalidInputError(
      subject,
      err.problems.map((p) => ({ field: p.field ? `graph${p.field.startsWith('[') ? '' : '.'}${p.field}` : 'graph', message: p.message })),
      { cause: err },
    );
  }
}
