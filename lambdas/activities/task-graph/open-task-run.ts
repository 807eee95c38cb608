import { z } from 'zod';
import { DeploymentNotFoundError, InvalidInputError, type FieldProblem } from '../../../core/errors';
import { idForExecution } from '../../../core/execution-id';
import { phaseNodes } from '../../../core/group-deployment';
import {
  chunkSchedule,
  chunkTaskRunPlan,
  countTaskStates,
  groupTaskRunId,
  parseTaskRunRequest,
  planTaskGraph,
  requireTaskRuns,
  scheduleFieldsOf,
  startTaskRun,
  taskGraphNodes,
  type ParsedTaskRunRequest,
  type TaskGraph,
  type TaskPlan,
} from '../../../core/task-graph';
import { resumeCarriesOn, resumedMessage, sessionControlOf, type CancelRequested, type StopRequested } from '../../../core/session-control';
import { parseOrThrow } from '../../../core/validation';
import { isTaskRunSettled, type TaskRunRecord, type TaskRunStatus } from '../../../ports/task-run-store';
import { recordRefusal } from '../run-starts';
import type { TaskGraphDependencies } from './dependencies';

export interface OpenTaskRunEvent {
  input: unknown;
  executionId: string;
}

/** The workflow's whole payload: which run, where it is, and when to look again. Everything else is in the table. */
export interface TaskRunPointer {
  runId: string;
  /** Passes the stored run has applied: the next Advance Task Run expects this many. */
  increment: number;
  iteration: number;
  iterationLimit: number;
  waitSeconds: number;
  done: boolean;
  status: TaskRunStatus;
  /** A group's deploy phase: at the iteration limit the execution hands back to its parent instead of continuing as new. */
  child: boolean;
  generation: number;
  /** When the run's node locks were last renewed (the heartbeat runs a quarter lease apart); absent: at the next pass. */
  locksRenewedAt?: number;
}

/** What Step Functions adds to the input of an execution another one starts (a parent, or continue-as-new). */
const startedBy = { AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: z.string().optional() };
const groupInput = z.strictObject({ deploymentId: z.string().min(1), group: z.string().min(1), ...startedBy });
/** `generation` is continue-as-new's (it always carries one); a person's resume (the CLI's, the console's) has none. */
const resumeInput = z.strictObject({ resumeRunId: z.string().min(1), generation: z.number().int().min(0).optional(), ...startedBy });

/**
 * Opens a task run: validates the request and plans the graph over the inventory's nodes (every
 * problem named, nothing touched on invalid input), then stores the plan, every node task
 * committed (TODO or BLOCKED), and the record. Or finds the run again: a retried first task, a
 * continued execution (`{resumeRunId}`), a group's deploy phase handed back by its child.
 * `{cancelRunId}` / `{stopRunId}` (the console's controls) only write the request (core/session-control.ts).
 */
export async function openTaskRun(event: OpenTaskRunEvent, deps: TaskGraphDependencies): Promise<TaskRunPointer | CancelRequested | StopRequested> {
  const input = event.input;
  // The console's cancel and stop: write the request the running run picks up (as `rollout session cancel|stop` does), and end this execution.
  const control = sessionControlOf(input, 'tasks', ['cancel', 'stop']);
  if (control?.action === 'cancel') {
    const record = await deps.store.requestCancel(control.id);
    return { cancelRequested: { id: control.id, kind: 'tasks', state: record.status } };
  }
  if (control?.action === 'stop') {
    const record = await deps.store.requestStop(control.id);
    return { stopRequested: { id: control.id, kind: 'tasks', state: record.status } };
  }
  const pointer = (record: TaskRunRecord, child: boolean, generation: number): TaskRunPointer => ({
    runId: record.runId,
    increment: record.increment,
    iteration: 0,
    iterationLimit: deps.settings.iterationsPerExecution,
    waitSeconds: 0,
    done: isTaskRunSettled(record.status),
    status: record.status,
    child,
    generation,
  });
  if (isObjectWith(input, 'resumeRunId')) {
    const { resumeRunId, generation } = parseOrThrow(resumeInput, input, 'task run resume');
    const found = await deps.store.getRun(resumeRunId);
    if (!found) throw new InvalidInputError('task run resume', [{ field: 'resumeRunId', message: `no task run '${resumeRunId}'` }]);
    // A person's resume carries the run on (a stop not finished withdrawn, a STOPPED run reopened: core/session-control.ts).
    // Continue-as-new never does: a run stopping when its execution continued as new goes on stopping, and a STOPPED one ends.
    let record = found;
    if (generation !== undefined) await deps.store.noteGeneration(resumeRunId, generation);
    else if (resumeCarriesOn(found.status)) {
      record = await deps.store.reopenStopped(resumeRunId);
      if (record.status === 'RUNNING') await deps.store.messages.append(resumeRunId, resumedMessage(found.status));
    }
    // A person's resume continues as new after the newest generation of the run's earlier chains (their names are taken).
    return pointer(record, record.deployment !== undefined, generation ?? found.generation ?? 0);
  }
  if (isObjectWith(input, 'deploymentId')) {
    const { deploymentId, group } = parseOrThrow(groupInput, input, 'group task run');
    const runId = groupTaskRunId(deploymentId, group);
    let record = (await deps.store.getRun(runId)) ?? (await createGroupRun(deps, runId, deploymentId, group));
    // Stopped with its deployment: the deployment's resume (RUNNING again) carries the deploy phase on from where it stopped.
    if (record.status === 'STOPPED' && (await deps.deployments.getDeployment(deploymentId))?.status === 'RUNNING') {
      record = await deps.store.reopenStopped(runId);
      if (record.status === 'RUNNING') await deps.store.messages.append(runId, 'Resumed after a stop');
    }
    return pointer(record, true, 0);
  }
  const runId = idForExecution(event.executionId);
  const existing = await deps.store.getRun(runId);
  if (existing) return pointer(existing, false, 0);
  let parsed: ParsedTaskRunRequest;
  let plan: TaskPlan;
  try {
    parsed = parseTaskRunRequest(input);
    plan = plannedOrRefused(parsed, await nodesOf(deps), deps);
  } catch (err) {
    // Refused before anything was written: the run's id says why from now on (GET /task-runs/{id}).
    if (err instanceof InvalidInputError) await recordRefusal(deps.starts, runId, 'tasks', err, deps.clock.now(), deps.simulatedTime);
    throw err;
  }
  return pointer(await createRun(deps, runId, parsed, plan), false, 0);
}

async function createGroupRun(deps: TaskGraphDependencies, runId: string, deploymentId: string, group: string): Promise<TaskRunRecord> {
  const deployment = await deps.deployments.getDeployment(deploymentId);
  if (!deployment) throw new DeploymentNotFoundError(deploymentId);
  const request = deployment.settings.taskGraph;
  if (!request) throw new InvalidInputError('group task run', [{ field: 'deploymentId', message: `deployment ${deploymentId} has no task graph` }]);
  const parsed = parseTaskRunRequest(request, 'deployment request taskGraph');
  // The group's nodes that prepared: the Shipyard group selects the nodes, the graph orders their tasks.
  const nodes = phaseNodes(await deps.deployments.getPlan(deploymentId), deployment.state, group, 'DEPLOY');
  const plan = planTaskGraph(parsed.graph, await nodesOf(deps), { ...parsed.selection, nodes });
  checkExecutor(parsed.graph, plan, deps);
  return createRun(deps, runId, parsed, plan, { deploymentId, group });
}

/** A standalone run must run something: a selection that leaves nothing is refused, saying why. */
function plannedOrRefused(parsed: ParsedTaskRunRequest, nodes: ReturnType<typeof taskGraphNodes>, deps: TaskGraphDependencies): TaskPlan {
  const plan = requireTaskRuns(planTaskGraph(parsed.graph, nodes, parsed.selection));
  checkExecutor(parsed.graph, plan, deps);
  return plan;
}

/** Every task type the plan runs must be one the site can run (a shell task needs a command transport). */
function checkExecutor(graph: TaskGraph, plan: TaskPlan, deps: TaskGraphDependencies): void {
  const planned = new Set(Object.values(plan.nodes).flatMap((tasks) => tasks.map((task) => task.id)));
  const problems: FieldProblem[] = [];
  for (const task of graph.tasks) {
    if (!planned.has(task.id)) continue;
    const why = deps.executor.unsupported(task.type);
    if (why) problems.push({ field: `graph.${task.path}`, message: `${task.type} task ${task.id} cannot run on this site: ${why}` });
  }
  if (problems.length > 0) throw new InvalidInputError('task run request', problems);
}

async function nodesOf(deps: TaskGraphDependencies) {
  return taskGraphNodes(await deps.inventory.listNodes());
}

async function createRun(
  deps: TaskGraphDependencies,
  runId: string,
  parsed: ParsedTaskRunRequest,
  plan: TaskPlan,
  deployment?: { deploymentId: string; group: string },
): Promise<TaskRunRecord> {
  const runPlan = chunkTaskRunPlan(plan);
  const state = startTaskRun(plan);
  const now = deps.clock.now();
  const record: Omit<TaskRunRecord, 'increment'> = {
    runId,
    createdAt: new Date(now).toISOString(),
    ...(deps.simulatedTime ? { simulatedTime: true, wallCreatedAt: new Date().toISOString() } : {}),
    status: 'RUNNING',
    settings: parsed.settings,
    schedule: scheduleFieldsOf(state),
    counts: countTaskStates(state),
    nodeCount: Object.keys(plan.nodes).length,
    chunkCount: runPlan.chunks.length,
    startedAt: now,
    ...(deployment ? { deployment } : {}),
  };
  await deps.store.createRun(record, runPlan, chunkSchedule(runPlan, state, new Map(), new Map()));
  // A concurrent first attempt may have won the create: the stored record is the run.
  return (await deps.store.getRun(runId))!;
}

function isObjectWith(value: unknown, key: string): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && key in value;
}
