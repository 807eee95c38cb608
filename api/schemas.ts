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
const SESSION_STATES = ['UPDATING', 'READY', 'DELETING', 'DELETED', 'HALTED', 'STOPPING', 'STOPPED'] as const satisfies readonly SessionState[];
/** A deployment's statuses, and a task run's (both core's run statuses, core/run-status.ts). */
const DEPLOYMENT_STATUSES = ['RUNNING', 'CANCELLING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPING', 'STOPPED'] as const satisfies readonly DeploymentStatus[];

/** DELETE /environments/{id}: the environment is gone, its nodes and name free. */
export const removedEnvironmentSchema = z.object({ id: z.number().int(), removed: z.literal(true) });

export const startedRunSchema = z.object({
  id: z.string(),
  kind: z.enum(['upgrade', 'deployment', 'tasks', 'environment-upgrade']),
  executionArn: z.string(),
});

/** On simulated time: the wall-clock instant a run was created (its `createdAt` is then the instant its run starts from). */
const wallCreatedAtSchema = z.string().optional().describe('On simulated time only: the wall-clock date it was created (ISO 8601)');

export const sessionSummarySchema = z.looseObject({
  upgradeId: z.string(),
  kind: z.literal('ComputeUpgradeSession'),
  state: z.enum(SESSION_STATES),
  completed: z.boolean(),
  createdAt: shownInstantSchema,
  startingLabel: z.string(),
  upgradingLabel: z.string(),
  failedLabel: z.string(),
  upgradeStepSize: z.number().int(),
  upgradeTemplateId: z.string(),
  workloadManagerType: z.string(),
});

export const sessionReportSchema = sessionSummarySchema.extend({
  progress: z.object({
    step: z.number().int().describe('The step, counted from 1 (`step 1 of 8`); the last once past it'),
    stage: z.enum(STAGES),
  }),
  messages: z.array(z.string()),
  counts: z.record(z.string(), z.number().int()),
  nodes: z.record(z.string(), z.looseObject({ status: z.string() })),
});

export const cancelResultSchema = z.object({
  id: z.string(),
  kind: z.enum(['upgrade', 'environment-upgrade']),
  state: z.enum([...SESSION_STATES, ...ENVIRONMENT_UPGRADE_STATES, 'REFUSED']),
  running: z.boolean().describe('Whether an execution works on it now; if not, the cancel applies when it is resumed'),
  /** Set when the session had ended and is removed (CRUS); absent for a deletion under way. */
  removed: z.literal(true).optional(),
});

export const deploymentCancelResultSchema = z.object({
  id: z.string(),
  kind: z.literal('deployment'),
  state: z
    .enum([...DEPLOYMENT_STATUSES, 'REFUSED'])
    .describe('CANCELLING: no group or batch starts any more; actions in flight finish, then it ends CANCELLED'),
  running: z.boolean().describe('Whether an execution works on it now; if not, the cancel applies when it is resumed'),
  /** Set when the deployment had ended and is removed; absent for a cancel under way. */
  removed: z.literal(true).optional(),
});

/** What `POST /sessions/{id}/approve|pause|unpause` answers. */
export const gateResultSchema = z.object({
  id: z.string(),
  action: z.enum(['approve', 'pause', 'unpause']),
  batch: z.number().int().optional().describe('approve: the batch approved, from 1'),
  running: z.boolean().describe('Whether a process that runs workflows holds the session; if not, the gate applies when it is resumed'),
  wakeError: z
    .string()
    .optional()
    .describe('The gate is stored, but the workflow parked for its operator could not be woken: the same request sends its task token again'),
});

export const stopResultSchema = z.object({
  id: z.string(),
  kind: z.enum(['upgrade', 'deployment', 'tasks']),
  state: z
    .enum([...SESSION_STATES, ...DEPLOYMENT_STATUSES])
    .describe('STOPPING: what is in flight finishes, nothing new starts, then it ends STOPPED (a resume carries it on)'),
  running: z.boolean().describe('Whether an execution works on it now; if not, nothing is in flight and it stays as it is until resumed'),
});

export const deploymentSummarySchema = z.looseObject({
  deploymentId: z.string(),
  status: z.enum(DEPLOYMENT_STATUSES),
  createdAt: shownInstantSchema,
  groupCount: z.number().int(),
  nodeCount: z.number().int(),
});

export const deploymentReportSchema = z.looseObject({
  deploymentId: z.string(),
  status: z.enum(DEPLOYMENT_STATUSES),
  criticalGroupsFailed: z.boolean(),
  failedCriticalGroups: z.array(z.string()),
  groups: z.record(z.string(), z.looseObject({ stage: z.string() })),
  nodes: z.record(z.string(), z.string()),
});

/** Fuel's Node as assign returns it: the node's fields and the seed it now belongs to. */
export const assignedNodeSchema = environmentNodeSchema.extend({ cluster_id: z.number().int() });

const childUpgradeSchema = z.looseObject({
  upgradeId: z.string(),
  nodes: z.array(z.string()),
  state: z.enum(SESSION_STATES).optional(),
  stage: z.enum(STAGES).optional(),
  counts: z.record(z.string(), z.number().int()).optional(),
});

/** A side-by-side environment upgrade in a listing of sessions. */
export const environmentUpgradeSummarySchema = z.looseObject({
  upgradeId: z.string(),
  kind: z.literal(ENVIRONMENT_UPGRADE_KIND),
  environmentId: z.number().int(),
  releaseId: z.number().int().optional(),
  seedId: z.number().int().optional(),
  state: z.enum(ENVIRONMENT_UPGRADE_STATES),
  completed: z.boolean(),
  createdAt: shownInstantSchema,
  wallCreatedAt: wallCreatedAtSchema,
  progress: z.object({ phase: z.enum(ENVIRONMENT_UPGRADE_PHASES) }),
  failure: z.object({ error: z.string(), problems: z.array(z.object({ field: z.string(), message: z.string() })) }).optional(),
});

/** GET /sessions/{id} of an environment upgrade: its phase, messages and the rolling upgrades it ran (each a session). */
export const environmentUpgradeReportSchema = environmentUpgradeSummarySchema.extend({
  messages: z.array(z.string()),
  rollingUpgrades: z.object({ controllers: childUpgradeSchema.optional(), nodes: childUpgradeSchema.optional() }),
});

const refusedSchema = z.object({ error: z.string(), problems: z.array(z.object({ field: z.string(), message: z.string() })) });

/** A session the API started whose workflow has not opened it yet (PENDING), or whose first state refused it (REFUSED, saying why). */
export const startedSessionSchema = z.object({
  upgradeId: z.string(),
  kind: z.literal('ComputeUpgradeSession'),
  state: z.enum(['PENDING', 'REFUSED']),
  completed: z.literal(false),
  createdAt: shownInstantSchema,
  wallCreatedAt: wallCreatedAtSchema,
  executionArn: z.string().optional(),
  messages: z.array(z.string()),
  refused: refusedSchema.optional(),
});

/** A deployment started and not recorded yet (PENDING), or refused by Start Deployment (REFUSED, saying why). */
export const startedDeploymentSchema = z.object({
  deploymentId: z.string(),
  status: z.enum(['PENDING', 'REFUSED']),
  createdAt: shownInstantSchema,
  wallCreatedAt: wallCreatedAtSchema,
  executionArn: z.string().optional(),
  messages: z.array(z.string()),
  refused: refusedSchema.optional(),
});

/** A task run started and not opened yet (PENDING), or refused by Open Task Run (REFUSED, saying why: nothing was touched). */
export const startedTaskRunSchema = z.object({
  runId: z.string(),
  status: z.enum(['PENDING', 'REFUSED']),
  createdAt: shownInstantSchema,
  wallCreatedAt: wallCreatedAtSchema,
  executionArn: z.string().optional(),
  messages: z.array(z.string()),
  refused: refusedSchema.optional(),
});

const OPERATION_STATES = ['PROPOSED', 'TODO', 'BLOCKED', 'TRANSITION', 'ACTIVE', 'ERROR'] as const satisfies readonly OperationState[];
const taskRunSettingsSchema = z.object({ maxInTransition: z.number().int(), pollIntervalSeconds: z.number(), taskTimeoutSeconds: z.number() });
const byNodeAndTask = <T extends z.ZodType>(value: T) => z.record(z.string(), z.record(z.string(), value));

/** A standalone task run in GET /task-runs (its report has the task states). */
export const taskRunSummarySchema = z.looseObject({
  runId: z.string(),
  status: z.enum(DEPLOYMENT_STATUSES),
  createdAt: shownInstantSchema,
  wallCreatedAt: wallCreatedAtSchema,
  counts: z.record(z.string(), z.number().int()).describe('Node tasks by state (PROPOSED, TODO, BLOCKED, TRANSITION, ACTIVE, ERROR)'),
  nodeCount: z.number().int(),
  settings: taskRunSettingsSchema,
});

/** GET /task-runs/{id}: the run's progress (status, counts) and report (each node's task states, why a task is blocked, errors, results). */
export const taskRunReportSchema = z.looseObject({
  runId: z.string(),
  status: z.enum(DEPLOYMENT_STATUSES),
  createdAt: shownInstantSchema,
  wallCreatedAt: wallCreatedAtSchema,
  timeBase: z.enum(['wall-clock', 'simulated']).describe("The run's clock: simulated instants are seconds from its start, never dates"),
  elapsedSeconds: z.number().optional().describe("Seconds of the site's clock from its start to its end; absent while it runs"),
  counts: z.record(z.string(), z.number().int()).describe('Node tasks by state (PROPOSED, TODO, BLOCKED, TRANSITION, ACTIVE, ERROR)'),
  nodeCount: z.number().int(),
  settings: taskRunSettingsSchema,
  nodes: byNodeAndTask(z.enum(OPERATION_STATES)).describe('node -> task -> its state, tasks in execution order'),
  blocked: byNodeAndTask(z.array(z.string())).describe('node -> task -> the failed node tasks (`node/task`) it waits behind'),
  errors: byNodeAndTask(z.string()).describe('node -> task -> what went wrong (`failed: exit 1`, `timeout: ...`)'),
  leftAlone: byNodeAndTask(z.string()).describe('node -> task -> why the run left it alone (a node not alive or not available)'),
  results: byNodeAndTask(z.enum(['ok', 'failed', 'timeout'])).describe('node -> task -> how each task that ran to its end ended'),
  dropped: z.array(z.object({ task: z.string(), reason: z.string() })).describe('The tasks the selection or a condition left out, and why'),
  warnings: z.array(z.string()),
  messages: z.array(z.string()),
  deployment: z.object({ deploymentId: z.string(), group: z.string() }).optional().describe("Set for a group deployment's deploy phase"),
});

/** DELETE /task-runs/{id}: cancelled (CANCELLING), or removed (it had ended, or its start was refused). */
export const taskRunCancelResultSchema = z.object({
  id: z.string(),
  kind: z.literal('tasks'),
  state: z
    .enum([...DEPLOYMENT_STATUSES, 'REFUSED'])
    .describe('CANCELLING: no task starts any more; tasks in flight finish, the drains the run made are lifted, then it ends CANCELLED'),
  running: z.boolean().describe('Whether an execution works on it now; if not (STOPPED), the cancel applies when it is resumed'),
  /** Set when the run had ended and is removed; absent for a cancel under way. */
  removed: z.literal(true).optional(),
});
