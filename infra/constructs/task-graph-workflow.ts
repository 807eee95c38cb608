import type { Construct } from 'constructs';
import type { TaskGraphFunctionName } from '../../contracts';
import { ContinuingWorkflow, type ContinuingWorkflowProps } from './continuing-workflow';

export type TaskGraphWorkflowProps = ContinuingWorkflowProps<TaskGraphFunctionName>;

/**
 * The task-graph state machine (Fuel's granular deployment on the annealer), from
 * statemachines/task-graph.asl.json. Started alone (it continues as new), or by DeployGroup as a
 * group's deploy phase (it hands back to its parent at its iteration budget).
 */
export class TaskGraphWorkflow extends ContinuingWorkflow<TaskGraphFunctionName> {
  constructor(scope: Construct, id: string, props: TaskGraphWorkflowProps) {
    super(scope, id, 'TaskGraph', props);
  }
}
