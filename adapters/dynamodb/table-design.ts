import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The single-table design, shared by the session store, the local engine's in-memory DynamoDB and the CDK stack,
 * so that the three can never disagree on a key name.
 *
 * | item       | pk               | sk                                  | other attributes                         |
 * |------------|------------------|-------------------------------------|------------------------------------------|
 * | session    | SESSION#<id>     | SESSION                             | every UpgradeSession field, gsi1pk/gsi1sk |
 * | plan chunk | SESSION#<id>     | PLAN#<chunk, 6 digits>              | nodes (≤ 1,000 names, plan order)         |
 * | node       | SESSION#<id>     | NODE#<name>                         | name, index, status, phase, reason        |
 * | message    | SESSION#<id>     | MSG#<epoch ms, 15 digits>#<6 hex>   | text, at (deployments and task runs keep theirs in their own partitions too) |
 * | lock       | LOCK#<node>      | LOCK                                | owner, leaseExpiresAt, fencingToken, acquiredAt |
 * | connector  | CONNECTOR#<kind>#<name> | CONNECTOR                    | record (a boot session, an action), expiresAt |
 * | release    | ENVIRONMENTS     | RELEASE#<id, 10 digits>             | release                                  |
 * | environment| ENVIRONMENTS     | ENV#<id, 10 digits>                 | environment (without nodes), revision, registration? (pending), deleting? |
 * | env node   | ENVIRONMENTS     | ENVNODE#<node id, 10 digits>        | node, clusterId (the one environment holding it) |
 * | env name   | ENVIRONMENTS     | ENVNAME#<name>                      | environmentId (the one environment named so) |
 * | site node  | ENVIRONMENTS     | ENVSITENODE#<site node name>        | nodeId (the environment node it is), environmentId (who claimed it) |
 * | upgrade    | ENVIRONMENTS     | UPGRADE#<original id, 10 digits>    | seedId (the 1:1 relation)                |
 * | env ids    | ENVIRONMENTS     | LAST_ID                             | lastId                                   |
 * | upgrading  | ENVIRONMENTS     | UPGRADING#<env id, 10 digits>       | upgradeId (the environment upgrade holding it) |
 * | env upgrade| ENVUPGRADE#<id>  | SESSION                             | session, revision, gsi1pk/gsi1sk          |
 * | run start  | RUN#<id>         | START                               | id, kind, at, executionArn?, refused?     |
 * | site event | SITEEVENTS       | EVENT#<firing id>                   | id, event, nodes, firedAt, receivedAt, expiresAt |
 * | schedule   | SCHEDULES        | SCHEDULE#<group>#<name>             | every ScheduleRecord field (embedded control plane only) |
 * | task run   | TASKRUN#<id>     | TASKRUN                             | every TaskRunRecord field but the schedule, scheduleGz; gsi1pk/gsi1sk (standalone runs) |
 * | run plan   | TASKRUN#<id>     | TPLAN#<part, 3 digits>              | data (a part of the gzipped TaskRunPlan)  |
 * | run chunk  | TASKRUN#<id>     | TCHUNK#<chunk, 6 digits>            | data (gzipped task states of ≤ 2,000 node tasks) |
 */
export const PARTITION_KEY = 'pk';
export const SORT_KEY = 'sk';

/** Sparse: only session items carry its keys, so listing sessions is one Query (newest first) and nothing else lands in it. */
export const SESSIONS_BY_CREATION_INDEX = 'sessionsByCreation';
export const GSI1_PARTITION_KEY = 'gsi1pk';
export const GSI1_SORT_KEY = 'gsi1sk';
export const SESSIONS_GSI_PARTITION = 'SESSIONS';

/** Honoured on AWS (the stack enables TTL on it); the embedded store ignores TTL, so nothing may depend on expiry. */
export const TTL_ATTRIBUTE = 'expiresAt';

/** Key attributes: stripped from every object the store returns. */
export const KEY_ATTRIBUTES = [PARTITION_KEY, SORT_KEY, GSI1_PARTITION_KEY, GSI1_SORT_KEY] as const;

/** 1,000 names of ~15 bytes stay far below the 400 KB item limit, and a 10,000-node plan is only 10 items. */
export const PLAN_CHUNK_SIZE = 1000;

export const SESSION_SK = 'SESSION';
export const LOCK_SK = 'LOCK';
export const PLAN_SK_PREFIX = 'PLAN#';
export const NODE_SK_PREFIX = 'NODE#';
export const MSG_SK_PREFIX = 'MSG#';

export interface ItemKey {
  pk: string;
  sk: string;
}

export const sessionPk = (upgradeId: string): string => `SESSION#${upgradeId}`;
export const sessionKey = (upgradeId: string): ItemKey => ({ pk: sessionPk(upgradeId), sk: SESSION_SK });
/** Sorts by creation time; the id breaks ties between sessions created in the same millisecond. */
export const sessionGsi1Sk = (createdAt: string, upgradeId: string): string => `${createdAt}#${upgradeId}`;

/** Zero-padded so that chunks sort in plan order. */
export const planChunkKey = (upgradeId: string, chunk: number): ItemKey => ({
  pk: sessionPk(upgradeId),
  sk: `${PLAN_SK_PREFIX}${String(chunk).padStart(6, '0')}`,
});

export const nodeKey = (upgradeId: string, name: string): ItemKey => ({ pk: sessionPk(upgradeId), sk: `${NODE_SK_PREFIX}${name}` });

/** Zero-padded epoch ms so that messages sort oldest first; the random suffix keeps concurrent writers apart. */
export const messageSk = (epochMs: number, suffix: string): string => `${MSG_SK_PREFIX}${String(epochMs).padStart(15, '0')}#${suffix}`;
export const messageKey = (upgradeId: string, epochMs: number, suffix: string): ItemKey => ({ pk: sessionPk(upgradeId), sk: messageSk(epochMs, suffix) });

/** Locks are per node, outside any session partition: every session contends for the same node. */
export const lockKey = (node: string): ItemKey => ({ pk: `LOCK#${node}`, sk: LOCK_SK });

/**
 * What a command-driven connector remembers (ports/connector-state.ts), one item per record, in its own
 * partition: the `CONNECTOR#` prefix keeps it apart from sessions, deployments and locks, and the kind
 * keeps slurm-reboot's sessions apart from the command provisioner's actions of the same name.
 */
export const CONNECTOR_SK = 'CONNECTOR';
export const connectorRecordKey = (kind: string, name: string): ItemKey => ({ pk: `CONNECTOR#${kind}#${name}`, sk: CONNECTOR_SK });

/** The table for local creation (the embedded DynamoDB); the CDK stack declares the same keys and index from these constants. */
export function createTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: PARTITION_KEY, AttributeType: 'S' },
      { AttributeName: SORT_KEY, AttributeType: 'S' },
      { AttributeName: GSI1_PARTITION_KEY, AttributeType: 'S' },
      { AttributeName: GSI1_SORT_KEY, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
      { AttributeName: SORT_KEY, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: SESSIONS_BY_CREATION_INDEX,
        KeySchema: [
          { AttributeName: GSI1_PARTITION_KEY, KeyType: 'HASH' },
          { AttributeName: GSI1_SORT_KEY, KeyType: 'RANGE' },
        ],
        // ALL: the listing returns whole sessions without a GetItem per session.
        Projection: { ProjectionType: 'ALL' },
      },
    ],
  };
}

// Group deployments share the table: one record item, the gzipped plan in parts, and a result per batch.
export const DEPLOYMENT_SK = 'DEPLOYMENT';
export const DEPLOYMENT_PLAN_SK_PREFIX = 'DPLAN#';
export const BATCH_SK_PREFIX = 'BATCH#';
export const DEPLOYMENTS_GSI_PARTITION = 'DEPLOYMENTS';
export const deploymentPk = (deploymentId: string): string => `DEPLOYMENT#${deploymentId}`;
export const deploymentKey = (deploymentId: string): ItemKey => ({ pk: deploymentPk(deploymentId), sk: DEPLOYMENT_SK });
export const deploymentPlanKey = (deploymentId: string, part: number): ItemKey => ({
  pk: deploymentPk(deploymentId),
  sk: `${DEPLOYMENT_PLAN_SK_PREFIX}${String(part).padStart(3, '0')}`,
});
/** Batch results sort by group and phase, so one Query reads a phase's results. */
export const batchResultPrefix = (group: string, phase: string): string => `${BATCH_SK_PREFIX}${group}#${phase}#`;
export const batchResultKey = (deploymentId: string, group: string, phase: string, batch: number): ItemKey => ({
  pk: deploymentPk(deploymentId),
  sk: `${batchResultPrefix(group, phase)}${String(batch).padStart(6, '0')}`,
});

// Fuel's releases and environments, and the upgrade relation: one small partition, listed by one Query.
export const ENVIRONMENTS_PK = 'ENVIRONMENTS';
export const RELEASE_SK_PREFIX = 'RELEASE#';
export const ENVIRONMENT_SK_PREFIX = 'ENV#';
export const UPGRADE_SK_PREFIX = 'UPGRADE#';
export const ENVIRONMENT_NODE_SK_PREFIX = 'ENVNODE#';
export const ENVIRONMENT_NAME_SK_PREFIX = 'ENVNAME#';
export const SITE_NODE_CLAIM_SK_PREFIX = 'ENVSITENODE#';
const paddedId = (id: number): string => String(id).padStart(10, '0');
export const releaseKey = (id: number): ItemKey => ({ pk: ENVIRONMENTS_PK, sk: `${RELEASE_SK_PREFIX}${paddedId(id)}` });
export const environmentKey = (id: number): ItemKey => ({ pk: ENVIRONMENTS_PK, sk: `${ENVIRONMENT_SK_PREFIX}${paddedId(id)}` });
/** A node's ownership: one item per node, so that moving it between environments is one conditional write. */
export const environmentNodeKey = (nodeId: number): ItemKey => ({ pk: ENVIRONMENTS_PK, sk: `${ENVIRONMENT_NODE_SK_PREFIX}${paddedId(nodeId)}` });
export const upgradeRelationKey = (originalId: number): ItemKey => ({ pk: ENVIRONMENTS_PK, sk: `${UPGRADE_SK_PREFIX}${paddedId(originalId)}` });
export const environmentIdCounterKey = (): ItemKey => ({ pk: ENVIRONMENTS_PK, sk: 'LAST_ID' });
/** An environment's name, claimed with a conditional put: one environment per name. */
export const environmentNameKey = (name: string): ItemKey => ({ pk: ENVIRONMENTS_PK, sk: `${ENVIRONMENT_NAME_SK_PREFIX}${name}` });
/** A site node (by its site name), claimed for the one environment node (Fuel id) that is it: a site node is in one environment. */
export const siteNodeClaimKey = (siteNodeName: string): ItemKey => ({ pk: ENVIRONMENTS_PK, sk: `${SITE_NODE_CLAIM_SK_PREFIX}${siteNodeName}` });
/** Which environment upgrade holds an environment: one item per environment, claimed with a conditional put. */
export const environmentClaimKey = (environmentId: number): ItemKey => ({ pk: ENVIRONMENTS_PK, sk: `UPGRADING#${paddedId(environmentId)}` });
/** Environment upgrades list through the sessions index, in their own partition of it. */
export const ENVIRONMENT_UPGRADES_GSI_PARTITION = 'ENV_UPGRADES';
export const environmentUpgradeKey = (upgradeId: string): ItemKey => ({ pk: `ENVUPGRADE#${upgradeId}`, sk: SESSION_SK });
// The embedded control plane's schedules (on AWS, EventBridge Scheduler keeps them): one partition, few items.
export const SCHEDULES_PK = 'SCHEDULES';
export const SCHEDULE_SK_PREFIX = 'SCHEDULE#';
export const scheduleKey = (groupName: string, name: string): ItemKey => ({ pk: SCHEDULES_PK, sk: `${SCHEDULE_SK_PREFIX}${groupName}#${name}` });
// Task-graph runs: the record, the gzipped plan in parts, and the nodes' task states in chunks.
export const TASK_RUN_SK = 'TASKRUN';
/** Standalone task runs list through the sessions index, in their own partition of it. */
export const TASK_RUNS_GSI_PARTITION = 'TASK_RUNS';
export const TASK_RUN_PLAN_SK_PREFIX = 'TPLAN#';
export const TASK_RUN_CHUNK_SK_PREFIX = 'TCHUNK#';
export const taskRunPk = (runId: string): string => `TASKRUN#${runId}`;
export const taskRunKey = (runId: string): ItemKey => ({ pk: taskRunPk(runId), sk: TASK_RUN_SK });
export const taskRunPlanKey = (runId: string, part: number): ItemKey => ({
  pk: taskRunPk(runId),
  sk: `${TASK_RUN_PLAN_SK_PREFIX}${String(part).padStart(3, '0')}`,
});
export const taskRunChunkKey = (runId: string, chunk: number): ItemKey => ({
  pk: taskRunPk(runId),
  sk: `${TASK_RUN_CHUNK_SK_PREFIX}${String(chunk).padStart(6, '0')}`,
});

/** A started run's acceptance or refusal, kept apart from its session or deployment partition. */
export const runStartKey = (id: string): ItemKey => ({ pk: `RUN#${id}`, sk: 'START' });

/** The site's trigger firings, one partition: a few per node-upgrade, kept a week (TTL) to recognise a redelivery. */
export const SITE_EVENTS_PK = 'SITEEVENTS';
export const SITE_EVENT_SK_PREFIX = 'EVENT#';
export const siteEventKey = (id: string): ItemKey => ({ pk: SITE_EVENTS_PK, sk: `${SITE_EVENT_SK_PREFIX}${id}` });
