import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { assignRequestSchema, cloneRequestSchema, environmentSchema, environmentUpgradeRequestSchema, releaseSchema } from '../core/environments';
import { deploymentRequestSchema } from '../core/group-deployment/deployment-request';
import { upgradeRequestSchema } from '../core/rolling-upgrade/upgrade-request';
import { siteEventSchema, SITE_EVENT_KINDS } from '../core/site/site-event';
import { taskRunRequestSchema } from '../core/task-graph';
import { NUMERIC_ID } from './environments';
import { JSON_TYPE, PROBLEM_TYPE } from './http';
import { problemSchema } from './problems';
import {
  assignedNodeSchema,
  cancelResultSchema,
  deploymentCancelResultSchema,
  stopResultSchema,
  deploymentReportSchema,
  deploymentSummarySchema,
  environmentUpgradeReportSchema,
  environmentUpgradeSummarySchema,
  gateResultSchema,
  removedEnvironmentSchema,
  startedDeploymentSchema,
  startedSessionSchema,
  sessionReportSchema,
  sessionSummarySchema,
  startedRunSchema,
  startedTaskRunSchema,
  taskRunCancelResultSchema,
  taskRunReportSchema,
  taskRunSummarySchema,
} from './schemas';

type Method = RouteConfig['method'];

/**
 * The components, named with zod's own metadata (`id`), which the generator turns into `$ref`s. Named
 * once per process: zod's global registry refuses an id twice.
 */
const schemas = {
  Problem: problemSchema.meta({ id: 'Problem' }),
  SiteEvent: siteEventSchema.meta({ id: 'SiteEventRequest' }),
  UpgradeRequest: upgradeRequestSchema.meta({ id: 'UpgradeRequest' }),
  /** POST /sessions: the upgrade request, and whether to wait for groups the inventory lacks. */
  SessionRequest: upgradeRequestSchema
    .safeExtend({
      waitForGroups: z
        .boolean()
        .optional()
        .describe(
          "Start even when a group the labels name is not in the site's inventory yet: the workflow waits for it (CRUS). Without it such a label is a 422 naming the field",
        ),
    })
    .meta({ id: 'SessionRequest' }),
  GateResult: gateResultSchema.meta({ id: 'GateResult' }),
  DeploymentRequest: deploymentRequestSchema.meta({ id: 'DeploymentRequest' }),
  StartedRun: startedRunSchema.meta({ id: 'StartedRun' }),
  SessionSummary: sessionSummarySchema.meta({ id: 'SessionSummary' }),
  SessionReport: sessionReportSchema.meta({ id: 'SessionReport' }),
  CancelResult: cancelResultSchema.meta({ id: 'CancelResult' }),
  DeploymentCancelResult: deploymentCancelResultSchema.meta({ id: 'DeploymentCancelResult' }),
  StopResult: stopResultSchema.meta({ id: 'StopResult' }),
  DeploymentSummary: deploymentSummarySchema.meta({ id: 'DeploymentSummary' }),
  DeploymentReport: deploymentReportSchema.meta({ id: 'DeploymentReport' }),
  Environment: environmentSchema.meta({ id: 'Environment' }),
  Release: releaseSchema.meta({ id: 'Release' }),
  CloneRequest: cloneRequestSchema.meta({ id: 'CloneRequest' }),
  AssignRequest: assignRequestSchema.meta({ id: 'AssignRequest' }),
  Node: assignedNodeSchema.meta({ id: 'Node' }),
  EnvironmentUpgradeRequest: environmentUpgradeRequestSchema.meta({ id: 'EnvironmentUpgradeRequest' }),
  EnvironmentUpgradeSummary: environmentUpgradeSummarySchema.meta({ id: 'EnvironmentUpgradeSummary' }),
  EnvironmentUpgradeReport: environmentUpgradeReportSchema.meta({ id: 'EnvironmentUpgradeReport' }),
  StartedSession: startedSessionSchema.meta({ id: 'StartedSession' }),
  StartedDeployment: startedDeploymentSchema.meta({ id: 'StartedDeployment' }),
  RemovedEnvironment: removedEnvironmentSchema.meta({ id: 'RemovedEnvironment' }),
  TaskRunRequest: taskRunRequestSchema.meta({ id: 'TaskRunRequest' }),
  TaskRunSummary: taskRunSummarySchema.meta({ id: 'TaskRunSummary' }),
  TaskRunReport: taskRunReportSchema.meta({ id: 'TaskRunReport' }),
  StartedTaskRun: startedTaskRunSchema.meta({ id: 'StartedTaskRun' }),
  TaskRunCancelResult: taskRunCancelResultSchema.meta({ id: 'TaskRunCancelResult' }),
};

const body = (schema: z.ZodType, description: string): ResponseConfig => ({ description, content: { [JSON_TYPE]: { schema } } });
const problem = (description: string): ResponseConfig => ({ description, content: { [PROBLEM_TYPE]: { schema: schemas.Problem } } });
const requestBody = (schema: z.ZodType) => ({ body: { required: true, content: { [JSON_TYPE]: { schema } } } });
const idParam = (description: string) => ({ params: z.object({ id: z.string().describe(description) }) });
/** Environment and release ids are Fuel's positive integers (any other id is a 404). */
const numericIdParam = (description: string) => ({ params: z.object({ id: z.string().regex(NUMERIC_ID).describe(description) }) });

/** Registers one operation; each group of routes below registers its own, in the order the document lists them. */
type RegisterPath = (method: Method, route: string, summary: string, config: Omit<RouteConfig, 'method' | 'path' | 'summary'>) => void;

/** The OpenAPI 3.1 document of the API, generated from the same zod schemas the handlers validate with. */
export function buildOpenApiDocument(): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  const path: RegisterPath = (method, route, summary, config) => registry.registerPath({ method, path: route, summary, ...config });
  sessionPaths(path);
  deploymentPaths(path);
  taskRunPaths(path);
  environmentPaths(path);
  environmentUpgradePaths(path);
  siteEventPaths(path);
  path('get', '/openapi.json', 'This document', {
    responses: { 200: { description: 'The OpenAPI document', content: { [JSON_TYPE]: { schema: z.record(z.string(), z.unknown()) } } } },
  });

  registry.registerComponent('securitySchemes', 'sigv4', {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'Behind API Gateway (the stack): IAM auth, every request signed with AWS Signature Version 4 for execute-api. `rollout serve` asks for none.',
  });

  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'baremetal-rollout',
      version: '1',
      description: 'Upgrade sessions (CRUS), group deployments (Shipyard), task runs (task graphs) and environments with upgrade seeds (Fuel).',
    },
  });
  withUnsupportedMediaType(document);
  return document;
}

/** What the router answers on every route before the handler: a body that is not JSON (415). */
function withUnsupportedMediaType(document: ReturnType<OpenApiGeneratorV31['generateDocument']>): void {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations as Record<string, { requestBody?: unknown; responses?: Record<string, unknown> }>)) {
      if (operation.requestBody && operation.responses) {
        operation.responses['415'] = {
          description: `The body is not ${JSON_TYPE} (UTF-8)`,
          content: { [PROBLEM_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } },
        };
      }
    }
  }
}

/** The site's trigger firings (`rollout relay`, issue 29): record one (idempotent by its id), list them. */
function siteEventPaths(path: RegisterPath): void {
  const recorded = z.object({
    id: z.string().describe("The firing's id"),
    recorded: z.boolean().describe('True when this delivery recorded it; false when it was recorded already'),
    duplicate: z.boolean().describe('True when a firing with this id was recorded already: nothing changed'),
    woke: z.boolean().describe("True when this delivery woke the session's workflow waiting for the site (a new firing with a session)"),
  });
  const siteEvent = z.object({
    id: z.string().describe("The firing's id"),
    event: z.enum(SITE_EVENT_KINDS).describe("up, down or drained (a trigger's firing); command (a session's command ended)"),
    nodes: z.array(z.string()).describe('The nodes, expanded from the hostlist'),
    session: z.string().optional().describe('The session whose trigger fired, when the relay named it, or that sent the command'),
    firedAt: z.string().describe('When the trigger fired (ISO 8601)'),
    receivedAt: z.string().describe('When the control plane recorded it, at its first delivery (ISO 8601)'),
  });
  path(
    'post',
    '/site-events',
    "Record a firing of a site trigger (strigger's up, down, drained), as `rollout relay` delivers it, or a session's command's end",
    {
      description:
        "Idempotent by `id`: the first delivery records it (201), another with the same id changes nothing (200, `duplicate: true`). A new firing that names a session wakes that session's workflow waiting for the site (`woke`); one without is recorded only. `command`: a session's command on the site's command transport ended (a node's health check, from SSM Run Command's EC2 Command Invocation Status-change Notification): the session reads its result once, woken. `rollout serve` keeps them in its data directory's table; the stack in its DynamoDB table, a week (TTL).",
      request: requestBody(schemas.SiteEvent),
      responses: {
        201: body(recorded, 'Recorded'),
        200: body(recorded, 'Delivered before: nothing changed'),
        400: problem('The body is not a JSON object (or not strict JSON)'),
        422: problem('Invalid fields, each named: `event`, `nodes` (a hostlist that does not parse), `firedAt`, `id`'),
        503: problem('This API keeps no site events'),
      },
    },
  );
  path('get', '/site-events', 'The recorded firings, oldest first', {
    responses: { 200: body(z.array(siteEvent), 'The firings'), 503: problem('This API keeps no site events') },
  });
}

/** Upgrade sessions (CRUS): list, start, the window's gates, read, delete by the deletion rules, stop. */
function sessionPaths(path: RegisterPath): void {
  path('get', '/sessions', 'List upgrade sessions and environment upgrades, newest first', {
    responses: { 200: body(z.array(z.union([schemas.SessionSummary, schemas.EnvironmentUpgradeSummary])), 'The sessions') },
  });
  path('post', '/sessions', 'Start a rolling upgrade session (CRUS create)', {
    request: requestBody(schemas.SessionRequest),
    responses: {
      201: body(schemas.StartedRun, 'Started'),
      400: problem('The body is not a JSON object'),
      422: problem(
        "Invalid fields, each named: the request's own, a boot template the boot service lacks, a label naming no group of the inventory (unless waitForGroups)",
      ),
    },
  });
  for (const [action, summary] of [
    ['approve', 'Mode window: approve the batch the session waits for (approval: each-batch, pauseAfterBatches)'],
    ['pause', 'Mode window: start no new node (nodes in flight finish) until unpaused'],
    ['unpause', 'Mode window: lift a pause'],
  ] as const) {
    path('post', `/sessions/{id}/${action}`, summary, {
      request: idParam('the upgrade id'),
      responses: {
        200: body(schemas.GateResult, 'Stored on the session; a workflow parked for its operator is woken'),
        404: problem('No such session'),
        409: problem('The session cannot take it now: not a window, nothing to approve, or it has ended'),
      },
    });
  }
  path('get', '/sessions/{id}', 'An upgrade session or environment upgrade report', {
    request: idParam('the upgrade id'),
    responses: {
      200: body(
        z.union([schemas.SessionReport, schemas.EnvironmentUpgradeReport, schemas.StartedSession]),
        'The session; or, before it has opened, PENDING; or REFUSED, saying why',
      ),
      404: problem('No such session'),
    },
  });
  path('delete', '/sessions/{id}', 'Delete an upgrade session by the CRUS deletion rules (an environment upgrade passes it on to its rolling upgrade)', {
    request: idParam('the upgrade id'),
    responses: {
      200: body(schemas.CancelResult, 'DELETING (the deletion rules apply), or removed (it had ended)'),
      404: problem('No such session'),
      409: problem('The session is being deleted, has not opened yet, or is a rolling upgrade an environment upgrade still running reads'),
    },
  });
  path(
    'post',
    '/sessions/{id}/stop',
    'Stop an upgrade session: nodes rebooting finish, nothing new starts, nodes not rebooted yet are left as they were; it ends STOPPED and a resume carries it on (DELETE applies the CRUS deletion rules instead)',
    {
      request: idParam('the upgrade id'),
      responses: {
        200: body(schemas.StopResult, 'STOPPING'),
        404: problem('No such session'),
        409: problem('The session is not running (ended, stopped, or being deleted)'),
      },
    },
  );
  resumePath(path, '/sessions/{id}/resume', 'an upgrade session', 'the upgrade id');
}

/** POST .../resume: a run whose execution died, or that was stopped, carried on from the store by a new execution. */
function resumePath(path: RegisterPath, route: string, what: string, idDescription: string): void {
  path('post', route, `Resume ${what} whose execution died or that was stopped: a new execution carries it on from the store (as \`rollout session resume\`)`, {
    request: idParam(idDescription),
    responses: {
      202: body(schemas.StartedRun, 'An execution carries it on; the Location header names the run to follow'),
      404: problem(`No such ${what.replace(/^an? /, '')}`),
      409: problem('An execution still runs it (stop it first, or wait until it is STOPPED), or it has ended'),
    },
  });
}

/** Group deployments (Shipyard): list, start, read, cancel or remove, stop, resume. */
function deploymentPaths(path: RegisterPath): void {
  path('get', '/deployments', 'List group deployments, newest first', { responses: { 200: body(z.array(schemas.DeploymentSummary), 'The deployments') } });
  path('post', '/deployments', 'Start a group deployment', {
    request: requestBody(schemas.DeploymentRequest),
    responses: { 201: body(schemas.StartedRun, 'Started'), 400: problem('The body is not a JSON object'), 422: problem('Invalid fields, each named') },
  });
  path('get', '/deployments/{id}', 'A group deployment report', {
    request: idParam('the deployment id'),
    responses: {
      200: body(z.union([schemas.DeploymentReport, schemas.StartedDeployment]), 'The deployment; or PENDING; or REFUSED, saying why'),
      404: problem('No such deployment'),
    },
  });
  path(
    'delete',
    '/deployments/{id}',
    'Cancel a running group deployment (no group or batch starts after it, actions in flight finish, it ends CANCELLED), or remove one that has ended',
    {
      request: idParam('the deployment id'),
      responses: {
        200: body(schemas.DeploymentCancelResult, 'CANCELLING, or removed (it had ended, or its start was refused)'),
        404: problem('No such deployment'),
        409: problem('The deployment is being cancelled, or has not started yet'),
      },
    },
  );
  path(
    'post',
    '/deployments/{id}/stop',
    'Stop a group deployment: no group or batch starts after it, actions in flight finish, it ends STOPPED and a resume carries it on',
    {
      request: idParam('the deployment id'),
      responses: { 200: body(schemas.StopResult, 'STOPPING'), 404: problem('No such deployment'), 409: problem('The deployment is not running') },
    },
  );
  resumePath(path, '/deployments/{id}/resume', 'a group deployment', 'the deployment id');
}

/** Task runs (the TaskGraph workflow, `rollout deploy --graph`): list, start, read, cancel or remove, stop, resume. */
function taskRunPaths(path: RegisterPath): void {
  path('get', '/task-runs', 'List task runs, newest first (standalone runs: a group deployment lists its deploy phases)', {
    responses: { 200: body(z.array(schemas.TaskRunSummary), 'The task runs') },
  });
  path('post', '/task-runs', "Start a task run: run a task graph over the site's nodes (as `rollout deploy --graph FILE`)", {
    description:
      "The body is the TaskGraph workflow's input: `graph` (the graph file's YAML or JSON text, or the document itself), `selection` (`tasks`, `skip`, `start`, `end`, `nodes`: `--tasks`, `--skip`, `--start`, `--end`, `--nodes`) and the settings (`maxInTransition`, `pollIntervalSeconds`, `taskTimeoutSeconds`: `--max-in-transition`, `--poll-interval`, `--task-timeout`). The graph and the selection are checked before the answer, and planned over the site's nodes when the site answers; what only the workflow can tell (a task type the site cannot run) leaves the run REFUSED, saying why, at its Location.",
    request: requestBody(schemas.TaskRunRequest),
    responses: {
      201: body(schemas.StartedRun, 'Started: the Location header names the run (GET /task-runs/{id})'),
      400: problem('The body is not a JSON object (or not strict JSON: a duplicate key, named)'),
      422: problem(
        'Invalid fields, each named: the graph (`graph.tasks[2].requires[0]`), the selection (`selection.start`), the settings; an unknown node or a selection that leaves nothing to run, when the site answers',
      ),
    },
  });
  path('get', '/task-runs/{id}', "A task run's progress and report", {
    description:
      "Its status and counts of node tasks by state (the progress), each node's task states in execution order, why each blocked task is blocked, errors, results and messages (the report). Before the workflow has opened it: PENDING; or REFUSED, saying why (nothing was touched). On a simulated site `createdAt` is `{secondsFromStart, timeBase: 'simulated'}`, never a date.",
    request: idParam('the task run id'),
    responses: {
      200: body(z.union([schemas.TaskRunReport, schemas.StartedTaskRun]), 'The task run; or PENDING; or REFUSED, saying why'),
      404: problem('No such task run'),
    },
  });
  path(
    'delete',
    '/task-runs/{id}',
    'Cancel a task run (no task starts after it, tasks in flight finish, the drains it made are lifted, it ends CANCELLED), or remove one that has ended',
    {
      request: idParam('the task run id'),
      responses: {
        200: body(schemas.TaskRunCancelResult, 'CANCELLING (a STOPPED run: when it is resumed), or removed (it had ended, or its start was refused)'),
        404: problem('No such task run'),
        409: problem("The task run is being cancelled, has not started yet, or is a group deployment's deploy phase (its deployment cancels and removes it)"),
      },
    },
  );
  path(
    'post',
    '/task-runs/{id}/stop',
    'Stop a task run: no task starts after it, tasks in flight finish, tasks not started are left as they were; it ends STOPPED and a resume carries it on (DELETE cancels instead)',
    {
      request: idParam('the task run id'),
      responses: {
        200: body(schemas.StopResult, 'STOPPING'),
        404: problem('No such task run'),
        409: problem("The task run is not running (ended, stopped, being cancelled), or is a group deployment's deploy phase"),
      },
    },
  );
  resumePath(path, '/task-runs/{id}/resume', 'a task run', 'the task run id');
}

/** Fuel's environments and releases: list, register, read, delete. */
function environmentPaths(path: RegisterPath): void {
  path('get', '/environments', 'List environments (generated attributes masked)', {
    responses: { 200: body(z.array(schemas.Environment), 'The environments') },
  });
  path('post', '/environments', 'Register an environment with its nodes (a stack or a profile-driven serve has no site file to seed from)', {
    request: requestBody(schemas.Environment),
    responses: {
      201: body(schemas.Environment, 'Registered (generated attributes masked)'),
      200: body(schemas.Environment, 'The same environment was registered already'),
      400: problem("Invalid fields, each named: the schema, an unknown release or original, a node the site's inventory lacks"),
      409: problem(
        'Another environment of this id, or a node (by id or site name), name or seed another environment holds: of concurrent registrations wanting one, exactly one gets it',
      ),
    },
  });
  path('get', '/releases', 'List releases', { responses: { 200: body(z.array(schemas.Release), 'The releases') } });
  path('post', '/releases', 'Register a release', {
    request: requestBody(schemas.Release),
    responses: {
      201: body(schemas.Release, 'Registered'),
      200: body(schemas.Release, 'The same release was registered already'),
      400: problem('Invalid fields, each named (a bootTemplate the boot service lacks included)'),
      409: problem('Another release of this id'),
    },
  });
  path('get', '/releases/{id}', 'One release', {
    request: numericIdParam('the release id'),
    responses: { 200: body(schemas.Release, 'The release'), 404: problem('No such release') },
  });
  path('get', '/environments/{id}', 'One environment (generated attributes masked)', {
    request: numericIdParam('the environment id'),
    responses: { 200: body(schemas.Environment, 'The environment'), 404: problem('No such environment') },
  });
  path('delete', '/environments/{id}', 'Delete an environment: its nodes leave it, its name and upgrade relations are released', {
    request: numericIdParam('the environment id'),
    responses: {
      200: body(schemas.RemovedEnvironment, 'Deleted'),
      404: problem('No such environment'),
      409: problem('An environment upgrade of it, or of the original it is the seed of, is running'),
    },
  });
}

/** The upgrade-seed extensions of Nailgun's API (clone, assign) and the single-call side-by-side upgrade. */
function environmentUpgradePaths(path: RegisterPath): void {
  path('post', '/environments/{id}/upgrade/clone', "Create the environment's upgrade seed on a newer release", {
    request: { ...numericIdParam('the original environment id'), ...requestBody(schemas.CloneRequest) },
    responses: {
      200: body(schemas.Environment, 'The upgrade seed (generated attributes masked)'),
      400: problem('Malformed body or missing field'),
      404: problem('No such environment or release'),
      405: problem('The environment already has an upgrade seed, or is one'),
      409: problem(
        'An attribute set in the environment is removed by the release with no rename, or another environment has the name (of concurrent clones wanting one name, exactly one gets it)',
      ),
    },
  });
  path('post', '/environments/{id}/upgrade/assign', 'Move a node of the original environment into its upgrade seed', {
    request: { ...numericIdParam('the upgrade seed id'), ...requestBody(schemas.AssignRequest) },
    responses: {
      200: body(schemas.Node, 'The node, now in the seed, with its id, roles and addresses'),
      400: problem('Malformed body or missing field'),
      404: problem('No such environment or node'),
      405: problem("The node is not in the seed's original environment"),
      409: problem("A role of the node is not defined in the seed's release"),
    },
  });
  path('post', '/environments/{id}/upgrade', 'Upgrade the environment side by side: clone, assign and reimage the controllers, then roll the other nodes', {
    request: { ...numericIdParam('the environment id'), ...requestBody(schemas.EnvironmentUpgradeRequest) },
    responses: {
      201: body(schemas.StartedRun, 'Started: the environment upgrade session (GET /sessions/{id})'),
      400: problem('The body is not a JSON object'),
      404: problem('No such environment or release'),
      405: problem('The environment is an upgrade seed'),
      409: problem('An attribute or node role the release cannot take, or an upgrade of the environment running'),
      422: problem('Invalid fields, each named: the request, its rolling upgrade, the site (template, nodes, groups)'),
    },
  });
}
