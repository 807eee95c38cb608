/** The part of aws-local-stepfunctions' event log that the figures need (the package does not export the type). */
export interface EngineEvent {
  type: string;
  state?: { name?: string; type: string; input?: unknown; output?: unknown };
}

/**
 * What one local engine event costs in an AWS execution history, so that the embedded default
 * can tell whether a workflow stays inside the 25,000-event quota. AWS writes, for a Task:
 * TaskStateEntered, TaskScheduled, TaskStarted, TaskSucceeded, TaskStateExited (5); a retry adds
 * TaskFailed, TaskScheduled and TaskStarted; other states write Entered and Exited; a Map adds
 * MapStateStarted/MapStateSucceeded and one event per iteration start and end.
 */
export function historyEventsOf(event: EngineEvent): number {
  const stateType = event.state?.type;
  switch (event.type) {
    case 'ExecutionStarted':
    case 'ExecutionSucceeded':
    case 'ExecutionFailed':
    case 'ExecutionAborted':
    case 'ExecutionTimeout':
    case 'MapIterationStarted':
    case 'MapIterationSucceeded':
    case 'MapIterationFailed':
    case 'ParallelBranchStarted':
    case 'ParallelBranchSucceeded':
    case 'ParallelBranchFailed':
      return 1;
    case 'StateEntered':
      return stateType === 'Map' || stateType === 'Parallel' ? 2 : 1;
    case 'StateExited':
      if (stateType === 'Task') return 4;
      return stateType === 'Map' || stateType === 'Parallel' ? 2 : 1;
    case 'StateRetried':
      return 3;
    case 'StateFailed':
      return stateType === 'Task' ? 3 : 1;
    case 'StateCaught':
      return 0;
    default:
      return 0;
  }
}
