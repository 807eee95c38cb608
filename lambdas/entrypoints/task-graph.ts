import { lazyHandlers } from './lazy-handlers';
import type { TaskGraphFunctionName } from '../../contracts';
import { createTaskGraphHandlers } from '../activities/task-graph/handlers';
import { loadTaskGraphDependencies } from './environment';

/**
 * The deployed task-graph functions: one bundle, one exported handler per function
 * (the CDK stack points each Lambda at its export).
 */
const handlerFor = lazyHandlers<TaskGraphFunctionName>(async () => createTaskGraphHandlers(await loadTaskGraphDependencies()));

export const OpenTaskRun = handlerFor('OpenTaskRun');
export const AdvanceTaskRun = handlerFor('AdvanceTaskRun');
