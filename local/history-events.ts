import { HISTORY_EVENTS } from '../core/history-events';

/** The part of aws-local-stepfunctions' event log that the figures need (the package does not export the type). */
export interface EngineEvent {
  type: string;
  state?: { name?: string; type: string; input?: unknown; output?: unknown };
}

const isMap = (stateType: string | undefined) => stateType === 'Map' || stateType === 'Parallel';

/**
 * What one local engine event costs in an AWS execution history (core/history-events.ts), so that
 * the embedded default can tell whether a workflow stays inside the quota: a state's cost is split
 * between its entry (1, or half a Map's) and its exit (the rest).
 */
export function historyEventsOf(event: EngineEvent): number {
  const stateType = event.state?.type;
  switch (event.type) {
    case 'ExecutionStarted':
      return 1;
    case 'ExecutionSucceeded':
    case 'ExecutionFailed':
    case 'ExecutionAborted':
    case 'ExecutionTimeout':
      return HISTORY_EVENTS.execution - 1;
    case 'MapIterationStarted':
    case 'ParallelBranchStarted':
      return 1;
    case 'MapIterationSucceeded':
    case 'MapIterationFailed':
    case 'ParallelBranchSucceeded':
    case 'ParallelBranchFailed':
      return HISTORY_EVENTS.mapIteration - 1;
    case 'StateEntered':
      return isMap(stateType) ? HISTORY_EVENTS.mapState / 2 : 1;
    case 'StateExited':
      if (stateType === 'Task') return HISTORY_EVENTS.task - 1;
      return isMap(stateType) ? HISTORY_EVENTS.mapState / 2 : HISTORY_EVENTS.simpleState - 1;
    case 'StateRetried':
      return HISTORY_EVENTS.taskRetry;
    case 'StateFailed':
      // A failing Task writes Scheduled, Started and Failed; other states only their entry's counterpart.
      return stateType === 'Task' ? HISTORY_EVENTS.taskRetry : 1;
    default:
      return 0;
  }
}
