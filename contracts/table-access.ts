import type { FunctionName } from './functions';

/** The DynamoDB actions the stores call (adapters/dynamodb): no Scan anywhere. */
export type TableAction = 'GetItem' | 'BatchGetItem' | 'Query' | 'PutItem' | 'UpdateItem' | 'BatchWriteItem' | 'DeleteItem';

/**
 * One increment of a rolling-upgrade stage (lambdas/activities/rolling-upgrade/activity-runner.ts):
 * the session and the step's plan slice and node records (GetItem, BatchGetItem), the lock heartbeat
 * and the progress (UpdateItem), node records (BatchWriteItem), messages (PutItem, and the Query for
 * the newest one), slurm-reboot's records (GetItem, PutItem).
 */
const STAGE_INCREMENT: readonly TableAction[] = ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'BatchWriteItem'];
/** A group-deployment step reads the run (GetItem) and its plan (Query). */
const DEPLOYMENT_READ: readonly TableAction[] = ['GetItem', 'Query'];

/**
 * Who the table is granted to: the workflows' functions, the REST API's (`Api`) and the target of SSM's command
 * status-change notifications (`CommandEnds`: lambdas/entrypoints/command-ends.ts, in a stack whose profile has
 * an SSM transport with commandNotifications).
 */
export type TableUser = FunctionName | 'Api' | 'CommandEnds';

/**
 * What each function may do to the sessions table: exactly what its stores call, nothing more (no
 * Scan, and DeleteItem only where the environment store deletes: the REST API and Clone Seed). The stack grants these
 * (infra/constructs/workflow-functions.ts, rollout-api.ts, command-end-notifications.ts); test/infra/table-grants.specs.ts holds
 * the template to this table and test/workflows/table-access.test.ts every call a run of the workflows makes to it.
 */
export const TABLE_ACTIONS: Readonly<Record<TableUser, readonly TableAction[]>> = {
  // A new session (PutItem) and its first message (Query for the newest, PutItem); a resumed one is read (GetItem).
  OpenSession: ['GetItem', 'Query', 'PutItem'],
  StartStep: STAGE_INCREMENT,
  CheckQuiesce: STAGE_INCREMENT,
  BootStep: STAGE_INCREMENT,
  CheckBoot: STAGE_INCREMENT,
  EvaluateBoot: STAGE_INCREMENT,
  CheckReturnToService: STAGE_INCREMENT,
  AdvanceWindow: STAGE_INCREMENT,
  CancelSession: STAGE_INCREMENT,
  CleanUp: STAGE_INCREMENT,
  // Parks the session for its operator: the task token on the session item (UpdateItem, after a read).
  AwaitOperator: ['GetItem', 'UpdateItem'],
  // A failed execution: the session (GetItem), its triggers cleared on it (UpdateItem) and said (Query, PutItem).
  ReleaseSiteTriggers: ['GetItem', 'UpdateItem', 'Query', 'PutItem'],
  // Checks that the id is new (GetItem), then writes the plan parts and the record (PutItem); a
  // console cancel ({cancelDeploymentId}) writes the request on the record (UpdateItem).
  StartDeployment: ['GetItem', 'PutItem', 'UpdateItem'],
  PickReadyGroups: DEPLOYMENT_READ,
  PlanPhase: DEPLOYMENT_READ,
  // The command provisioner's records (GetItem, PutItem); the batch's node locks (UpdateItem, read back with
  // BatchGetItem, as is which runs the table knows when the site shows a claim); a wait's message (PutItem).
  StartBatch: [...DEPLOYMENT_READ, 'BatchGetItem', 'PutItem', 'UpdateItem'],
  // The action's record, and the batch result (PutItem); the locks' heartbeat and release (BatchGetItem, UpdateItem).
  CheckBatch: [...DEPLOYMENT_READ, 'BatchGetItem', 'PutItem', 'UpdateItem'],
  // The run state is saved with a conditional UpdateItem.
  // A deploy phase run as a task graph reads its task run's node-state chunks (BatchGetItem).
  // A group done gives its nodes' locks back (UpdateItem); so do a failed group and the deployment's end.
  EvaluatePhase: [...DEPLOYMENT_READ, 'BatchGetItem', 'UpdateItem'],
  FailGroup: [...DEPLOYMENT_READ, 'UpdateItem'],
  FinishDeployment: [...DEPLOYMENT_READ, 'UpdateItem'],
  // Record Failure: the status and the locks (UpdateItem), and a message saying why (Query for the newest, PutItem).
  FailDeployment: [...DEPLOYMENT_READ, 'PutItem', 'UpdateItem'],
  // Plans the graph: the deployment's run and plan when inside a group (GetItem, Query), then the run,
  // its plan parts and node-state chunks (PutItem, BatchWriteItem); or a refusal on its run start (PutItem).
  OpenTaskRun: ['GetItem', 'Query', 'BatchGetItem', 'PutItem', 'UpdateItem', 'BatchWriteItem'],
  // One annealer pass: the run and its plan and chunks (GetItem, Query, BatchGetItem), the changed
  // chunks (BatchWriteItem) and the run's conditional update (UpdateItem); its node locks (UpdateItem,
  // BatchGetItem) and messages (PutItem, Query).
  AdvanceTaskRun: ['GetItem', 'Query', 'BatchGetItem', 'PutItem', 'UpdateItem', 'BatchWriteItem'],
  // The environment upgrade (lambdas/activities/environment-upgrade): its session and the environments are
  // read (GetItem, Query) and moved on with conditional writes (UpdateItem); a new session, a seed environment
  // and messages are put (PutItem). Assigning controllers and preparing a rolling upgrade put nothing new.
  OpenEnvironmentUpgrade: ['GetItem', 'Query', 'PutItem', 'UpdateItem'],
  // A clone that fails after claiming the original releases its claim (DeleteItem).
  CloneSeed: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'],
  AssignControllers: ['GetItem', 'Query', 'UpdateItem'],
  PrepareRollingUpgrade: ['GetItem', 'Query', 'UpdateItem'],
  FollowRollingUpgrade: ['GetItem', 'Query', 'PutItem', 'UpdateItem'],
  FailEnvironmentUpgrade: ['GetItem', 'Query', 'PutItem', 'UpdateItem'],
  // Reports (GetItem, BatchGetItem, Query on the table and its index), a cancel (UpdateItem), and the
  // environment store's clone and assign (PutItem, UpdateItem; DeleteItem releases a clone's claim when the clone fails),
  // Removing an ended session or deployment deletes its item, then its plan, node and message items in batches (BatchWriteItem).
  Api: ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem'],
  // A health check's end: the site event, once by its id (a conditional PutItem), then the session's count of events
  // and its parked token taken (UpdateItem, the old item returned: no read before).
  CommandEnds: ['PutItem', 'UpdateItem'],
};

/**
 * The table's partitions, as IAM's `dynamodb:LeadingKeys` patterns (adapters/dynamodb/table-design.ts
 * names the keys): sessions with their plans, nodes and messages; node locks; connector records;
 * deployments; task runs; run starts; Fuel's environments; environment upgrades; the site's trigger firings.
 */
export type TablePartition = 'SESSION#*' | 'LOCK#*' | 'CONNECTOR#*' | 'DEPLOYMENT#*' | 'TASKRUN#*' | 'RUN#*' | 'ENVIRONMENTS' | 'ENVUPGRADE#*' | 'SITEEVENTS';

/**
 * What any function may do to a node lock: read it and change it with a condition (acquire, renew,
 * release, each fenced by owner and token in the store's condition). No PutItem, DeleteItem or
 * BatchWriteItem on a lock for anyone: no function can replace or delete a lock, its own or another's.
 */
export const LOCK_PARTITION: TablePartition = 'LOCK#*';
export const LOCK_ACTIONS: readonly TableAction[] = ['GetItem', 'BatchGetItem', 'UpdateItem'];

const ROLLING_UPGRADE_STAGE_PARTITIONS: readonly TablePartition[] = ['SESSION#*', 'LOCK#*', 'CONNECTOR#*'];
const ENVIRONMENT_UPGRADE_PARTITIONS: readonly TablePartition[] = ['ENVIRONMENTS', 'ENVUPGRADE#*', 'SESSION#*', 'CONNECTOR#*'];

/**
 * The partitions each function's stores reach (a function gets TABLE_ACTIONS on these only, and on the
 * locks only LOCK_ACTIONS): a deployment's function cannot touch a session, a lock or an environment, the
 * API no lock. test/workflows/table-access.test.ts holds every call of runs of every workflow to it.
 */
export const TABLE_PARTITIONS: Readonly<Record<TableUser, readonly TablePartition[]>> = {
  // A new session, or a refusal on its run start; slurm-reboot's records when it checks a boot template.
  OpenSession: ['SESSION#*', 'RUN#*', 'CONNECTOR#*'],
  StartStep: ROLLING_UPGRADE_STAGE_PARTITIONS,
  CheckQuiesce: ROLLING_UPGRADE_STAGE_PARTITIONS,
  BootStep: ROLLING_UPGRADE_STAGE_PARTITIONS,
  CheckBoot: ROLLING_UPGRADE_STAGE_PARTITIONS,
  EvaluateBoot: ROLLING_UPGRADE_STAGE_PARTITIONS,
  CheckReturnToService: ROLLING_UPGRADE_STAGE_PARTITIONS,
  AdvanceWindow: ROLLING_UPGRADE_STAGE_PARTITIONS,
  CancelSession: ROLLING_UPGRADE_STAGE_PARTITIONS,
  CleanUp: ROLLING_UPGRADE_STAGE_PARTITIONS,
  AwaitOperator: ['SESSION#*'],
  ReleaseSiteTriggers: ['SESSION#*'],
  StartDeployment: ['DEPLOYMENT#*', 'RUN#*'],
  PickReadyGroups: ['DEPLOYMENT#*'],
  PlanPhase: ['DEPLOYMENT#*'],
  // A batch holds its nodes' locks from its prepare to its deploy (all or none).
  StartBatch: ['DEPLOYMENT#*', 'CONNECTOR#*', 'LOCK#*'],
  CheckBatch: ['DEPLOYMENT#*', 'CONNECTOR#*', 'LOCK#*'],
  EvaluatePhase: ['DEPLOYMENT#*', 'TASKRUN#*', 'LOCK#*'],
  FailGroup: ['DEPLOYMENT#*', 'LOCK#*'],
  FinishDeployment: ['DEPLOYMENT#*', 'LOCK#*'],
  FailDeployment: ['DEPLOYMENT#*', 'LOCK#*'],
  // A new run, or a refusal on its run start (the API's start record says why).
  OpenTaskRun: ['TASKRUN#*', 'RUN#*', 'DEPLOYMENT#*', 'CONNECTOR#*', 'LOCK#*'],
  // A task run holds the locks of the nodes it changes, each until the node is settled.
  AdvanceTaskRun: ['TASKRUN#*', 'DEPLOYMENT#*', 'CONNECTOR#*', 'LOCK#*'],
  OpenEnvironmentUpgrade: ENVIRONMENT_UPGRADE_PARTITIONS,
  CloneSeed: ENVIRONMENT_UPGRADE_PARTITIONS,
  AssignControllers: ENVIRONMENT_UPGRADE_PARTITIONS,
  PrepareRollingUpgrade: ENVIRONMENT_UPGRADE_PARTITIONS,
  FollowRollingUpgrade: ENVIRONMENT_UPGRADE_PARTITIONS,
  FailEnvironmentUpgrade: ['ENVIRONMENTS', 'ENVUPGRADE#*'],
  // Sessions, deployments, task runs (read, stopped, cancelled), run starts, environments and their upgrades; slurm-reboot's records when it checks a template. No lock.
  Api: ['SESSION#*', 'DEPLOYMENT#*', 'TASKRUN#*', 'RUN#*', 'ENVIRONMENTS', 'ENVUPGRADE#*', 'CONNECTOR#*', 'SITEEVENTS'],
  // The site events, and the session the event wakes.
  CommandEnds: ['SITEEVENTS', 'SESSION#*'],
};

/** One statement of a function's grant on the table: `actions` on items whose partition key matches `partitions`, or Query on the index. */
export interface TableGrant {
  actions: readonly TableAction[];
  /** `dynamodb:LeadingKeys` (ForAllValues:StringLike): every key a request names must match one. */
  partitions: readonly TablePartition[];
}

/**
 * A function's grants on the table: its actions on its partitions but the locks; LOCK_ACTIONS of them on
 * the locks; and (`index`) Query on the sessions index, whose partitions are listings (SESSIONS,
 * DEPLOYMENTS, ENV_UPGRADES) and carry no condition.
 */
export function tableGrants(name: TableUser): { table: TableGrant[]; indexQuery: boolean } {
  const actions = TABLE_ACTIONS[name];
  const partitions = TABLE_PARTITIONS[name];
  const table: TableGrant[] = [];
  const items = partitions.filter((partition) => partition !== LOCK_PARTITION);
  if (items.length > 0) table.push({ actions, partitions: items });
  const lockActions = actions.filter((action) => LOCK_ACTIONS.includes(action));
  if (partitions.includes(LOCK_PARTITION) && lockActions.length > 0) table.push({ actions: lockActions, partitions: [LOCK_PARTITION] });
  return { table, indexQuery: actions.includes('Query') };
}
