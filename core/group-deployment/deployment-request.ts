import { z } from 'zod';
import { InvalidInputError } from '../errors';
import { nodeName } from '../site/names';
import type { TaskGraph } from '../task-graph/parse-task-graph';
import { parseTaskRunRequest, taskRunRequestSchema } from '../task-graph/task-run-request';
import { MAX_DURATION_SECONDS, MAX_POLL_INTERVAL_SECONDS, parseOrThrow, seconds as secondsOf } from '../validation';

/** A week: long enough for any real prepare or deploy, short enough that one batch's polls fit one execution's history. */
export const MAX_PHASE_TIMEOUT_SECONDS = MAX_DURATION_SECONDS;

const seconds = (field: string, fallback: number, max = MAX_PHASE_TIMEOUT_SECONDS) => secondsOf(field, { max }).default(fallback);

/**
 * The input of a group deployment: a DeploymentStrategy (the document or just `{groups}`), or a
 * list of node names, or neither (one critical group of every node), plus how it runs.
 */
export const deploymentRequestSchema = z
  .strictObject({
    strategy: z
      .unknown()
      .optional()
      .describe(
        'A deployment strategy (see Deployment strategy): the whole document, just `{groups: [...]}`, or its YAML or JSON text. Neither strategy nor nodes: one critical group `default` of every node at 100%',
      ),
    nodes: z
      .array(nodeName(), { error: 'nodes must be a list of node names' })
      .min(1, 'nodes must name at least one node')
      .optional()
      .describe('A list of node names to deploy, instead of a strategy (one critical group of them)'),
    /** Ready groups that run at once; Shipyard runs one at a time. */
    maxParallelGroups: z
      .number({ error: 'maxParallelGroups must be a number' })
      .int('maxParallelGroups must be a whole number')
      .min(1, 'maxParallelGroups must be at least 1')
      .default(1)
      .describe('Ready groups that run at once (Shipyard runs one at a time)'),
    prepareTimeoutSeconds: seconds('prepareTimeoutSeconds', 1800).describe(
      "Longest wait for a batch's prepare action; nodes that did not report success by then fail",
    ),
    deployTimeoutSeconds: seconds('deployTimeoutSeconds', 3600).describe(
      "Longest wait for a batch's deploy action; nodes that did not report success by then fail",
    ),
    pollIntervalSeconds: seconds('pollIntervalSeconds', 30, MAX_POLL_INTERVAL_SECONDS).describe(
      'How often the workflow polls the provisioner while an action runs',
    ),
    /** A task graph (core/task-graph) that runs as each group's deploy phase, over the group's nodes that prepared. */
    taskGraph: taskRunRequestSchema
      .optional()
      .describe(
        "A task run request (see Task run request) whose graph runs as each group's deploy phase, over the group's nodes that prepared; its selection may not name nodes",
      ),
  })
  .refine((r) => r.strategy === undefined || r.nodes === undefined, { message: 'give a strategy or a list of nodes, not both', path: ['nodes'] })
  .refine((r) => r.taskGraph?.selection.nodes === undefined, {
    message: "a group deployment's nodes come from its strategy's selectors (or its nodes), not from the graph's selection",
    path: ['taskGraph', 'selection', 'nodes'],
  });

export type DeploymentRequest = z.output<typeof deploymentRequestSchema>;

/** `taskGraphRead`: the task graph as the caller read and validated it already (parseTaskRunRequest's `graphRead`). */
export function parseDeploymentRequest(input: unknown, taskGraphRead?: TaskGraph): DeploymentRequest {
  const request = parseOrThrow(deploymentRequestSchema, input === undefined ? {} : input, 'deployment request');
  // The graph itself is read here too, so that a bad task is refused before any group starts.
  if (request.taskGraph) {
    try {
      parseTaskRunRequest(request.taskGraph, undefined, taskGraphRead);
    } catch (err) {
      if (!(err instanceof InvalidInputError)) throw err;
      throw new InvalidInputError(
        'deployment request',
        err.problems.map((p) => ({ ...p, field: `taskGraph.${p.field}` })),
        { cause: err },
      );
    }
  }
  return request;
}
