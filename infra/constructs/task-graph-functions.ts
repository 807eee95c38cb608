import { Duration } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { PROJECT_PATHS, type TaskGraphFunctionName } from '../../contracts';
import { WorkflowFunctions, type WorkflowFunctionsProps } from './workflow-functions';

/**
 * Lambda timeouts, equal to the TimeoutSeconds of the Task that invokes each function in
 * statemachines/task-graph.asl.json: Open Task Run plans the graph, Advance Task Run runs one pass.
 */
export const TASK_GRAPH_TIMEOUTS: Readonly<Record<TaskGraphFunctionName, Duration>> = {
  OpenTaskRun: Duration.minutes(5),
  AdvanceTaskRun: Duration.minutes(15),
};

/** The site connection (`environment`, `policies`), the table, logging and network; the entry and timeouts are fixed here. */
export type TaskGraphFunctionsProps = Omit<WorkflowFunctionsProps<string>, 'entry' | 'timeouts'>;

/** One Lambda per task-graph function, from lambdas/entrypoints/task-graph.ts. */
export class TaskGraphFunctions extends WorkflowFunctions<TaskGraphFunctionName> {
  constructor(scope: Construct, id: string, props: TaskGraphFunctionsProps) {
    super(scope, id, { ...props, entry: PROJECT_PATHS.taskGraphEntry, timeouts: TASK_GRAPH_TIMEOUTS });
  }
}
