import type { TaskGraphFunctionName } from '../../../contracts';
import { idForExecution } from '../../../core/execution-id';
import { createActivityHandlers, stringField, type ActivityHandler, type WorkflowActivity } from '../middleware';
import { advanceTaskRun } from './advance-task-run';
import type { TaskGraphDependencies } from './dependencies';
import { openTaskRun } from './open-task-run';

/** The task-graph functions, keyed by their names in contracts/ (`${<Key>FunctionArn}` in the workflow): one missing is a compile error. */
const TASK_GRAPH_ACTIVITIES = {
  OpenTaskRun: openTaskRun,
  AdvanceTaskRun: advanceTaskRun,
} satisfies Record<TaskGraphFunctionName, WorkflowActivity<TaskGraphDependencies>>;

export type TaskGraphHandler = ActivityHandler;

/** The run an event is about: its `runId`, or for Open Task Run the one it creates. */
export function taskRunIdOf(event: unknown): string | undefined {
  const executionId = stringField(event, 'executionId');
  return stringField(event, 'runId') ?? (executionId !== undefined ? idForExecution(executionId) : undefined);
}

/** Builds every task-graph handler from one set of dependencies. */
export function createTaskGraphHandlers(deps: TaskGraphDependencies): Record<TaskGraphFunctionName, TaskGraphHandler> {
  return createActivityHandlers(TASK_GRAPH_ACTIVITIES, deps, { idKey: 'runId', idOf: taskRunIdOf });
}
