/**
 * What each node prints last after a task-graph task: `rollout-task-exit=<status>` (pdsh prefixes it
 * with `<node>: `). The connector writes and reads it (adapters/site/tasks/node-commands.ts); the
 * simulated head node answers with it.
 */
export const TASK_EXIT_MARKER = 'rollout-task-exit=';
