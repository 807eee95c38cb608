import { z } from 'zod';
import { ENVIRONMENT_UPGRADE_KIND, ENVIRONMENT_UPGRADE_PHASES, ENVIRONMENT_UPGRADE_STATES, environmentNodeSchema } from '../core/environments';
import { STAGES, type SessionState } from '../core/rolling-upgrade/session';
import type { DeploymentStatus } from '../ports/deployment-store';
import { shownInstantSchema } from '../core/time-format';
import type { OperationState } from '../core/scheduling';

/**
 * The API's own response shapes: what the handlers return beyond the domain's schemas (requests
 * are the domain's: upgradeRequestSchema, deploymentRequestSchema, cloneRequestSchema,
 * assignRequestSchema; environments and nodes are environmentSchema and environmentNodeSchema).
 * Reports are open objects: the fields listed are the ones a client may rely on.
 */
/** The problems of a refused or failed run, each naming its field. */
const problemsSchema = z
  .array(z.object({ field: z.string().describe('The field at fault, as a path'), message: z.string().describe('What is wrong with it') }))
  .describe('The problems, each naming its field');

const SESSION_STATES = ['UPDATING', 'READY', 'DELETING', 'DELETED', 'HALTED', 'STOPPING', 'STOPPED'] as const satisfies readonly SessionState[];
/** A deployment's statuses, and a task run's (both core's run statuses, core/run-status.ts). */
const DEPLOYMENT_STATUSES = ['RUNNING', 'CANCELLING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPING', 'STOPPED'] as const satisfies readonly DeploymentStatus[];

/** DELETE /environments/{id}: the environment is gone, its nodes and name free. */
export const removedEnvironmentSchema = z.object({
  id: z.number().int().describe("The environment's id"),
  removed: z.literal(true).describe('Always true: it is gone'),
});

export const startedRunSchema = z.object({
  id: z.string().describe("The run's id: GET /sessions/{id} (an upgrade or environment upgrade), GET /deployments/{id} or GET /task-runs/{id}"),
  kind: z.enum(['upgrade', 'deployment', 'tasks', 'environment-upgrade']).describe('What was started'),
  executionArn: z.string().describe('The Step Functions execution that runs it'),
});

/** On simulated time: the wall-clock instant a run was created (its `createdAt` is then the instant its run starts from). */
const wallCreatedAtSchema = z.string().optional().describe('On simulated time only: the wall-clock date it was created (ISO 8601)');

export const sessionSummarySchema = z.looseObject({
  upgradeId: z.string().describe("The session's id"),
  kind: z.literal('ComputeUpgradeSession').describe("A rolling upgrade session (CRUS's kind)"),
  state: z
    .enum(SESSION_STATES)
    .describe(
      'UPDATING while it runs; READY once done; DELETING/DELETED when cancelled; HALTED past maxFailed; STOPPING/STOPPED when stopped (a resume carries it on)',
    ),
  completed: z.boolean().describe('Whether it has ended'),
  createdAt: shownInstantSchema.describe('When it was created'),
  startingLabel: z.string().describe("The request's startingLabel"),
  upgradingLabel: z.string().describe("The request's upgradingLabel"),
  failedLabel: z.string().describe("The request's failedLabel"),
  upgradeStepSize: z.number().int().describe("The request's upgradeStepSize"),
  upgradeTemplateId: z.string().describe("The request's upgradeTemplateId"),
  workloadManagerType: z.string().describe("The request's workloadManagerType"),
});

export const sessionReportSchema = sessionSummarySchema.extend({
  progress: z
    .object({
      step: z.number().int().describe('The step, counted from 1 (`step 1 of 8`); the last once past it'),
      stage: z.enum(STAGES).describe('The stage the session is in (a window runs as ROLLING)'),
    })
    .describe('Where the session is'),
  messages: z.array(z.string()).describe('What the session did, oldest first'),
  counts: z.record(z.string(), z.number().int()).describe('Nodes by status (upgraded, failed, not started, ...)'),
  nodes: z
    .record(z.string(), z.looseObject({ status: z.string().describe("The node's status (UPGRADED, FAILED, NOT_STARTED, ...)") }))
    .describe('Each node of the plan by name'),
});

export const cancelResultSchema = z.object({
  id: z.string().describe("The session's id"),
  kind: z.enum(['upgrade', 'environment-upgrade']).describe('What was cancelled'),
  state: z.enum([...SESSION_STATES, ...ENVIRONMENT_UPGRADE_STATES, 'REFUSED']).describe('Its state now: DELETING while the deletion rules apply'),
  running: z.boolean().describe('Whether an execution works on it now; if not, the cancel applies when it is resumed'),
  /** Set when the session had ended and is removed (CRUS); absent for a deletion under way. */
  removed: z.literal(true).optional().describe('Set when the session had ended and is removed (CRUS); absent for a deletion under way'),
});

export const deploymentCancelResultSchema = z.object({
  id: z.string().describe("The deployment's id"),
  kind: z.literal('deployment').describe('Always deployment'),
  state: z
    .enum([...DEPLOYMENT_STATUSES, 'REFUSED'])
    .describe('CANCELLING: no group or batch starts any more; actions in flight finish, then it ends CANCELLED'),
  running: z.boolean().describe('Whether an execution works on it now; if not, the cancel applies when it is resumed'),
  /** Set when the deployment had ended and is removed; absent for a cancel under way. */
  removed: z.literal(true).optional().describe('Set when the deployment had ended and is removed; absent for a cancel under way'),
});

/** What `POST /sessions/{id}/approve|pause|unpause` answers. */
export const gateResultSchema = z.object({
  id: z.string().describe("The session's id"),
  action: z.enum(['approve', 'pause', 'unpause']).describe('The gate stored'),
  batch: z.number().int().optional().describe('approve: the batch approved, from 1'),
  running: z.boolean().describe('Whether a process that runs workflows holds the session; if not, the gate applies when it is resumed'),
  wakeError: z
    .string()
    .optional()
    .describe('The gate is stored, but the workflow parked for its operator could not be woken: the same request sends its task token again'),
});

export const stopResultSchema = z.object({
  id: z.string().describe("The run's id"),
  kind: z.enum(['upgrade', 'deployment', 'tasks']).describe('What was stopped'),
  state: z
    .enum([...SESSION_STATES, ...DEPLOYMENT_STATUSES])
    .describe('STOPPING: what is in flight finishes, nothing new starts, then it ends STOPPED (a resume carries it on)'),
  running: z.boolean().describe('Whether an execution works on it now; if not, nothing is in flight and it stays as it is until resumed'),
});

export const deploymentSummarySchema = z.looseObject({
  deploymentId: z.string().describe("The deployment's id"),
  status: z
    .enum(DEPLOYMENT_STATUSES)
    .describe('RUNNING while it runs; SUCCEEDED, FAILED (a critical group failed) or CANCELLED once ended; STOPPING/STOPPED when stopped'),
  createdAt: shownInstantSchema.describe('When it was created'),
  groupCount: z.number().int().describe("The strategy's groups"),
  nodeCount: z.number().int().describe('The nodes the groups select'),
});

export const deploymentReportSchema = z.looseObject({
  deploymentId: z.string().describe("The deployment's id"),
  status: z
    .enum(DEPLOYMENT_STATUSES)
    .describe('RUNNING while it runs; SUCCEEDED, FAILED (a critical group failed) or CANCELLED once ended; STOPPING/STOPPED when stopped'),
  criticalGroupsFailed: z.boolean().describe('Whether a critical group failed'),
  failedCriticalGroups: z.array(z.string()).describe('The critical groups that failed'),
  groups: z
    .record(z.string(), z.looseObject({ stage: z.string().describe("The group's stage: NOT_STARTED, PREPARED, DEPLOYED or FAILED") }))
    .describe('Each group by name: its stage, critical, nodes, failures (criteria not met), blockedBy and cause'),
  nodes: z.record(z.string(), z.string()).describe("Each node's stage by name"),
});

/** Fuel's Node as assign returns it: the node's fields and the seed it now belongs to. */
export const assignedNodeSchema = environmentNodeSchema.extend({ cluster_id: z.number().int().describe('The environment (the seed) the node now belongs to') });

const childUpgradeSchema = z.looseObject({
  upgradeId: z.string().describe("The rolling upgrade session's id (GET /sessions/{id})"),
  nodes: z.array(z.string()).describe('The nodes it upgrades'),
  state: z.enum(SESSION_STATES).optional().describe('Its state'),
  stage: z.enum(STAGES).optional().describe('Its stage'),
  counts: z.record(z.string(), z.number().int()).optional().describe('Its nodes by status'),
});

/** A side-by-side environment upgrade in a listing of sessions. */
export const environmentUpgradeSummarySchema = z.looseObject({
  upgradeId: z.string().describe("The environment upgrade's id"),
  kind: z.literal(ENVIRONMENT_UPGRADE_KIND).describe('A side-by-side environment upgrade'),
  environmentId: z.number().int().describe('The environment upgraded'),
  releaseId: z.number().int().optional().describe('The release it upgrades to'),
  seedId: z.number().int().optional().describe('The upgrade seed, once cloned'),
  state: z.enum(ENVIRONMENT_UPGRADE_STATES).describe('Its state'),
  completed: z.boolean().describe('Whether it has ended'),
  createdAt: shownInstantSchema.describe('When it was created'),
  wallCreatedAt: wallCreatedAtSchema,
  progress: z.object({ phase: z.enum(ENVIRONMENT_UPGRADE_PHASES).describe('The phase it is in') }).describe('Where it is'),
  failure: z
    .object({ error: z.string().describe("The error's name"), problems: problemsSchema })
    .optional()
    .describe('Why it failed, when it did'),
});

/** GET /sessions/{id} of an environment upgrade: its phase, messages and the rolling upgrades it ran (each a session). */
export const environmentUpgradeReportSchema = environmentUpgradeSummarySchema.extend({
  messages: z.array(z.string()).describe('What it did, oldest first'),
  rollingUpgrades: z
    .object({
      controllers: childUpgradeSchema.optional().describe('The rolling upgrade of the controllers'),
      nodes: childUpgradeSchema.optional().describe('The rolling upgrade of the other nodes'),
    })
    .describe('The rolling upgrades it ran, each a session'),
});

const refusedSchema = z
  .object({ error: z.string().describe("The error's name"), problems: problemsSchema })
  .describe("Why the workflow's first state refused it");

/** A session the API started whose workflow has not opened it yet (PENDING), or whose first state refused it (REFUSED, saying why). */
export const startedSessionSchema = z.object({
  upgradeId: z.string().describe("The session's id"),
  kind: z.literal('ComputeUpgradeSession').describe('A rolling upgrade session'),
  state: z.enum(['PENDING', 'REFUSED']).describe('PENDING: not opened yet; REFUSED: its first state refused it'),
  completed: z.literal(false).describe('Always false'),
  createdAt: shownInstantSchema.describe('When it was started'),
  wallCreatedAt: wallCreatedAtSchema,
  executionArn: z.string().optional().describe('The Step Functions execution'),
  messages: z.array(z.string()).describe('What happened so far'),
  refused: refusedSchema.optional(),
});

/** A deployment started and not recorded yet (PENDING), or refused by Start Deployment (REFUSED, saying why). */
export const startedDeploymentSchema = z.object({
  deploymentId: z.string().describe("The deployment's id"),
  status: z.enum(['PENDING', 'REFUSED']).describe('PENDING: not recorded yet; REFUSED: Start Deployment refused it'),
  createdAt: shownInstantSchema.describe('When it was started'),
  wallCreatedAt: wallCreatedAtSchema,
  executionArn: z.string().optional().describe('The Step Functions execution'),
  messages: z.array(z.string()).describe('What happened so far'),
  refused: refusedSchema.optional(),
});

/** A task run started and not opened yet (PENDING), or refused by Open Task Run (REFUSED, saying why: nothing was touched). */
export const startedTaskRunSchema = z.object({
  runId: z.string().describe("The task run's id"),
  status: z.enum(['PENDING', 'REFUSED']).describe('PENDING: not opened yet; REFUSED: Open Task Run refused it'),
  createdAt: shownInstantSchema,
  wallCreatedAt: wallCreatedAtSchema,
  executionArn: z.string().optional().describe('The Step Functions execution'),
  messages: z.array(z.string()).describe('What happened so far'),
  refused: refusedSchema.optional(),
});

/** A task run's status, as a deployment's. */
const TASK_RUN_STATUS =
  'RUNNING while it runs; SUCCEEDED, FAILED or CANCELLED once ended; CANCELLING when cancelled; STOPPING/STOPPED when stopped (a resume carries it on)';

const OPERATION_STATES = ['PROPOSED', 'TODO', 'BLOCKED', 'TRANSITION', 'ACTIVE', 'ERROR'] as const satisfies readonly OperationState[];
const taskRunSettingsSchema = z
  .object({
    maxInTransition: z.number().int().describe('Node tasks in TRANSITION at once, over every role group'),
    pollIntervalSeconds: z.number().describe('How often the run looks at the tasks in flight, in seconds'),
    taskTimeoutSeconds: z.number().describe('The timeout of a task whose parameters give none, in seconds'),
  })
  .describe('How the run goes: its cap, poll interval and default task timeout');
const byNodeAndTask = <T extends z.ZodType>(value: T) => z.record(z.string(), z.record(z.string(), value));

/** A standalone task run in GET /task-runs (its report has the task states). */
export const taskRunSummarySchema = z.looseObject({
  runId: z.string().describe("The task run's id"),
  status: z.enum(DEPLOYMENT_STATUSES).describe(TASK_RUN_STATUS),
  createdAt: shownInstantSchema,
  wallCreatedAt: wallCreatedAtSchema,
  counts: z.record(z.string(), z.number().int()).describe('Node tasks by state (PROPOSED, TODO, BLOCKED, TRANSITION, ACTIVE, ERROR)'),
  nodeCount: z.number().int().describe('The nodes it runs tasks on'),
  settings: taskRunSettingsSchema,
});

/** GET /task-runs/{id}: the run's progress (status, counts) and report (each node's task states, why a task is blocked, errors, results). */
export const taskRunReportSchema = z.looseObject({
  runId: z.string().describe("The task run's id"),
  status: z.enum(DEPLOYMENT_STATUSES).describe(TASK_RUN_STATUS),
  createdAt: shownInstantSchema,
  wallCreatedAt: wallCreatedAtSchema,
  timeBase: z.enum(['wall-clock', 'simulated']).describe("The run's clock: simulated instants are seconds from its start, never dates"),
  elapsedSeconds: z.number().optional().describe("Seconds of the site's clock from its start to its end; absent while it runs"),
  counts: z.record(z.string(), z.number().int()).describe('Node tasks by state (PROPOSED, TODO, BLOCKED, TRANSITION, ACTIVE, ERROR)'),
  nodeCount: z.number().int().describe('The nodes it runs tasks on'),
  settings: taskRunSettingsSchema,
  nodes: byNodeAndTask(z.enum(OPERATION_STATES)).describe('node -> task -> its state, tasks in execution order'),
  blocked: byNodeAndTask(z.array(z.string())).describe('node -> task -> the failed node tasks (`node/task`) it waits behind'),
  errors: byNodeAndTask(z.string()).describe('node -> task -> what went wrong (`failed: exit 1`, `timeout: ...`)'),
  leftAlone: byNodeAndTask(z.string()).describe('node -> task -> why the run left it alone (a node not alive or not available)'),
  results: byNodeAndTask(z.enum(['ok', 'failed', 'timeout'])).describe('node -> task -> how each task that ran to its end ended'),
  dropped: z
    .array(z.object({ task: z.string().describe('The task left out'), reason: z.string().describe('Why') }))
    .describe('The tasks the selection or a condition left out, and why'),
  warnings: z.array(z.string()).describe('What the plan warned of (a task that selects no node, and the like)'),
  messages: z.array(z.string()).describe('What the run did, oldest first'),
  deployment: z
    .object({ deploymentId: z.string().describe('The deployment (GET /deployments/{id})'), group: z.string().describe('The group whose deploy phase it is') })
    .optional()
    .describe("Set for a group deployment's deploy phase"),
});

/** DELETE /task-runs/{id}: cancelled (CANCELLING), or removed (it had ended, or its start was refused). */
export const taskRunCancelResultSchema = z.object({
  id: z.string().describe("The task run's id"),
  kind: z.literal('tasks').describe('A task run'),
  state: z
    .enum([...DEPLOYMENT_STATUSES, 'REFUSED'])
    .describe('CANCELLING: no task starts any more; tasks in flight finish, the drains the run made are lifted, then it ends CANCELLED'),
  running: z.boolean().describe('Whether an execution works on it now; if not (STOPPED), the cancel applies when it is resumed'),
  /** Set when the run had ended and is removed; absent for a cancel under way. */
  removed: z.literal(true).optional().describe('Set when the run had ended (or was refused) and is now removed'),
});
