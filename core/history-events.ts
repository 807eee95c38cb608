/**
 * What states cost in an AWS execution history (the 25,000-event quota), in one place: the engine
 * counts executions with it and the group-deployment pages are sized by it. AWS writes, for a Task:
 * TaskStateEntered, TaskScheduled, TaskStarted, TaskSucceeded, TaskStateExited (5); a retry adds
 * TaskFailed, TaskScheduled and TaskStarted (3); other states write Entered and Exited (2); a Map
 * adds MapStateStarted/MapStateSucceeded (4 in all) and one event per iteration start and end (2);
 * an execution writes ExecutionStarted and ExecutionSucceeded (2).
 */
export const HISTORY_EVENTS = {
  task: 5,
  taskRetry: 3,
  /** Pass, Choice, Wait, Succeed, Fail. */
  simpleState: 2,
  /** Map or Parallel, without its iterations. */
  mapState: 4,
  mapIteration: 2,
  execution: 2,
} as const;

/** The hard quota of events in one execution's history. */
export const HISTORY_EVENT_QUOTA = 25_000;
