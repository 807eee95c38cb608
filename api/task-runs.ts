import { taskRunViewJson, recordJson } from '../control-plane/reports/view-json';
import { parseTaskRunRequest, planTaskGraph, requireTaskRuns, taskGraphNodes } from '../core/task-graph';
import { ENDED_TASK_RUN_STATUSES } from '../ports/task-run-store';
import type { RunStart } from '../ports/run-start-store';
import type { ApiDependencies } from './dependencies';
import { json } from './http';
import { problem, readJsonObject } from './problems';
import type { Route, RouteHandler } from './router';
import { resumeRoute, runLocation, startedRecord, startRecords, stopRoute, type StartRecords } from './run-routes';
import { unlessSiteFails } from './site-checks';

/**
 * Task runs (the TaskGraph workflow, `rollout deploy --graph`) as deployments are served: list, start
 * (201 + Location), read (its report: each node's task states, counts, messages; PENDING or REFUSED before
 * its record exists), DELETE (cancel a running one, remove one that has ended), stop and resume. A group
 * deployment's deploy phase is a task run too: readable here, stopped, cancelled and removed with its deployment.
 */
export function taskRunRoutes(deps: ApiDependencies): Route[] {
  const starts = startRecords(deps);
  return [
    { pattern: '/task-runs', invalidStatus: 422, methods: { GET: listTaskRuns(deps), POST: startTaskRun(deps, starts) } },
    { pattern: '/task-runs/{id}', invalidStatus: 422, methods: { GET: getTaskRun(deps, starts), DELETE: deleteTaskRun(deps, starts) } },
    stopRoute(deps, 'tasks'),
    resumeRoute(deps, 'tasks'),
  ];
}

/** Standalone runs (a group's deploy phase is listed by its deployment), newest first; no schedule (the report has the task states). */
function listTaskRuns({ controlPlane }: ApiDependencies): RouteHandler {
  return async () =>
    json(
      200,
      (await controlPlane.sessions()).flatMap((listed) => {
        if (listed.kind !== 'tasks') return [];
        const { schedule: _schedule, ...run } = listed.taskRun;
        return [recordJson(run)];
      }),
    );
}

/**
 * The TaskGraph workflow's input, as `rollout deploy --graph` sends it: the graph (YAML or JSON text, or the
 * document), the selection and the settings. Read once, here, so that a bad field is a 422 naming it (`graph.tasks[2].requires[0]`,
 * `selection.start`, `maxInTransition`); and planned over the site's nodes when the site answers (an unknown node,
 * a selection that leaves nothing to run), as the workflow's first state plans it.
 */
function startTaskRun({ controlPlane, site }: ApiDependencies, { accepted }: StartRecords): RouteHandler {
  return async (_params, request) => {
    const body = readJsonObject(request.body);
    const parsed = parseTaskRunRequest(body);
    await unlessSiteFails(
      site && (async () => requireTaskRuns(planTaskGraph(parsed.graph, taskGraphNodes(await site.inventory.listNodes()), parsed.selection))),
    );
    const run = await controlPlane.run('taskGraph', body);
    await accepted(run, 'tasks');
    return json(201, { id: run.id, kind: run.kind, executionArn: run.executionArn }, { location: runLocation('tasks', run.id) });
  };
}

function getTaskRun({ controlPlane }: ApiDependencies, { started }: StartRecords): RouteHandler {
  return async ({ id }) => {
    const view = await controlPlane.session(id!);
    if (view?.kind === 'tasks') return json(200, taskRunViewJson(view.report));
    const start = await started(id!, 'tasks');
    return start ? json(200, startedTaskRun(start)) : problem(404, `no task run with id '${id}'`);
  };
}

/**
 * As /deployments/{id}: a run not ended is cancelled (CANCELLING: no task starts after it, tasks in flight
 * finish, its own drains are lifted, it ends CANCELLED; a stopped one is wound down by its resume); one that has
 * ended is removed with its plan, task states and messages; one being cancelled, or still starting, or a group's
 * deploy phase (cancelled, stopped and removed with its deployment), is a 409.
 */
function deleteTaskRun({ controlPlane, runStarts }: ApiDependencies, { started }: StartRecords): RouteHandler {
  return async ({ id }) => {
    const status = await controlPlane.status(id!);
    if (status?.kind === 'tasks') {
      if (status.state === 'CANCELLING') return problem(409, `task run ${id} is being cancelled: it is removed by a DELETE once it has ended`);
      if (!ENDED_TASK_RUN_STATUSES.includes(status.state)) return json(200, await controlPlane.cancel(id!));
      // A group's deploy phase is refused (409): its deployment's DELETE removes it.
      const removed = await controlPlane.removeTaskRun(id!);
      await runStarts.remove(id!);
      return json(200, { id: id!, kind: 'tasks', state: removed.status, running: false, removed: true });
    }
    const start = await started(id!, 'tasks');
    if (!start) return problem(404, `no task run with id '${id}'`);
    if (!start.refused) return problem(409, `task run ${id} is starting: ask again once it has started`);
    await runStarts.remove(id!);
    return json(200, { id: id!, kind: 'tasks', state: 'REFUSED', running: false, removed: true });
  };
}

/** A task run not opened yet (PENDING), or refused by Open Task Run (REFUSED, saying why: nothing was touched). */
function startedTaskRun(start: RunStart) {
  return { runId: start.id, status: start.refused ? 'REFUSED' : 'PENDING', ...startedRecord(start, 'Task run refused') };
}
