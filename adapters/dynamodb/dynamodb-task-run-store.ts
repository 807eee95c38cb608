import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SessionNotCancellableError, SessionNotStoppableError, StaleWriteError, TaskRunNotFoundError } from '../../core/errors';
import { RESUME_CARRIES_ON } from '../../core/session-control';
import type { Clock } from '../../core/clock';
import { systemClock } from '../../core/clock';
import type { ScheduleFields, TaskRunChunk, TaskRunPlan } from '../../core/task-graph';
import { ENDED_TASK_RUN_STATUSES, type TaskRunRecord, type TaskRunStatus, type TaskRunStore } from '../../ports/task-run-store';
import { DynamoDbMessageLog } from './message-log';
import { batchGetAll, batchWriteAll } from './batch';
import { CONDITION_FAILED, conditionalWrite, withoutKeys, withoutUndefined } from './items';
import { pack, packParts, unpack, unpackParts } from './packed';
import { queryAll } from './query';
import {
  GSI1_PARTITION_KEY,
  GSI1_SORT_KEY,
  SESSIONS_BY_CREATION_INDEX,
  TASK_RUN_PLAN_SK_PREFIX,
  TASK_RUNS_GSI_PARTITION,
  taskRunChunkKey,
  taskRunKey,
  taskRunPk,
  taskRunPlanKey,
} from './table-design';

/** A requestCancel that keeps losing a race to the run's end gives up after this many rounds. */
const MAX_CANCEL_ATTEMPTS = 3;

/** Plans never change: a warm Lambda container reads each one once. */
const PLAN_CACHE_SIZE = 16;

interface StoredRecord extends Omit<TaskRunRecord, 'schedule'> {
  scheduleGz: Uint8Array;
}

/**
 * TaskRunStore on the rollout table: the plan gzipped in parts (written once), the nodes' task
 * states gzipped per chunk (a chunk is rewritten only when one of its tasks changed), and the
 * record, whose `increment` guards each pass of the annealer.
 */
export class DynamoDbTaskRunStore implements TaskRunStore {
  private readonly plans = new Map<string, TaskRunPlan>();
  private readonly messages: DynamoDbMessageLog;

  constructor(private readonly options: { tableName: string; client: DynamoDBDocumentClient; clock?: Clock }) {
    this.messages = new DynamoDbMessageLog({
      tableName: options.tableName,
      client: options.client,
      clock: options.clock ?? systemClock,
      partitionOf: taskRunPk,
    });
  }

  private get table() {
    return this.options.tableName;
  }

  async createRun(record: Omit<TaskRunRecord, 'increment'>, plan: TaskRunPlan, chunks: readonly TaskRunChunk[]): Promise<void> {
    if (await this.getRun(record.runId)) return;
    const { client } = this.options;
    await batchWriteAll(
      client,
      this.table,
      packParts(plan).map((data, part) => ({ PutRequest: { Item: { ...taskRunPlanKey(record.runId, part), data } } })),
    );
    await this.putChunks(record.runId, new Map(chunks.map((chunk, i) => [i, chunk])));
    const { schedule, ...rest } = record;
    // A concurrent create of the same run that wrote first wins: its chunks equal ours (the same plan, all proposed).
    await conditionalWrite(
      client.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            ...taskRunKey(record.runId),
            // Standalone runs are listed as sessions; a group's deploy phase is its deployment's.
            ...(record.deployment ? {} : { [GSI1_PARTITION_KEY]: TASK_RUNS_GSI_PARTITION, [GSI1_SORT_KEY]: `${record.createdAt}#${record.runId}` }),
            ...withoutUndefined(rest),
            increment: 0,
            scheduleGz: pack(schedule),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  async getRun(runId: string): Promise<TaskRunRecord | undefined> {
    const { Item } = await this.options.client.send(new GetCommand({ TableName: this.table, Key: taskRunKey(runId), ConsistentRead: true }));
    return Item ? toRecord(Item) : undefined;
  }

  async listRuns(): Promise<TaskRunRecord[]> {
    // GSIs cannot be read consistently: a run created a moment ago may be missing.
    const items = await queryAll(this.options.client, {
      TableName: this.table,
      IndexName: SESSIONS_BY_CREATION_INDEX,
      KeyConditionExpression: '#p = :p',
      ExpressionAttributeNames: { '#p': GSI1_PARTITION_KEY },
      ExpressionAttributeValues: { ':p': TASK_RUNS_GSI_PARTITION },
      ScanIndexForward: false,
    });
    return items.map(toRecord);
  }

  async requestCancel(runId: string): Promise<TaskRunRecord> {
    for (let attempt = 0; attempt < MAX_CANCEL_ATTEMPTS; attempt++) {
      const out = await conditionalWrite(
        this.options.client.send(
          new UpdateCommand({
            TableName: this.table,
            Key: taskRunKey(runId),
            // A stopping or STOPPED run can be cancelled too: the running pass (or the resume of a stopped one) winds it down.
            UpdateExpression: 'SET #status = :cancelling',
            // A group's deploy phase is cancelled with its deployment (cancelled alone, its group would be judged on work it never did).
            ConditionExpression: '#status IN (:running, :cancelling, :stopping, :stopped) AND attribute_not_exists(deployment)',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':cancelling': 'CANCELLING' satisfies TaskRunStatus,
              ':running': 'RUNNING' satisfies TaskRunStatus,
              ':stopping': 'STOPPING' satisfies TaskRunStatus,
              ':stopped': 'STOPPED' satisfies TaskRunStatus,
            },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      if (out !== CONDITION_FAILED) return toRecord(out.Attributes ?? {});
      const current = await this.getRun(runId);
      if (!current) throw new TaskRunNotFoundError(runId);
      if (current.deployment)
        throw new SessionNotCancellableError(runId, `the deploy phase of deployment ${current.deployment.deploymentId} (cancel the deployment)`);
      if (ENDED_TASK_RUN_STATUSES.includes(current.status)) throw new SessionNotCancellableError(runId, current.status);
    }
    throw new SessionNotCancellableError(runId, 'changing state');
  }

  appendMessage(runId: string, message: string): Promise<void> {
    return this.messages.appendMessage(runId, message);
  }

  listMessages(runId: string): Promise<string[]> {
    return this.messages.listMessages(runId);
  }

  listTimedMessages(runId: string): Promise<{ at: string; text: string }[]> {
    return this.messages.listTimedMessages(runId);
  }

  latestMessage(runId: string): Promise<string | undefined> {
    return this.messages.latestMessage(runId);
  }

  async getPlan(runId: string): Promise<TaskRunPlan> {
    const cached = this.plans.get(runId);
    if (cached) return cached;
    const items = await queryAll(this.options.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': taskRunPk(runId), ':prefix': TASK_RUN_PLAN_SK_PREFIX },
      ConsistentRead: true,
    });
    if (items.length === 0) throw new TaskRunNotFoundError(runId, 'no plan stored');
    const plan = unpackParts<TaskRunPlan>(items);
    if (this.plans.size >= PLAN_CACHE_SIZE) this.plans.delete(this.plans.keys().next().value!);
    this.plans.set(runId, plan);
    return plan;
  }

  async getChunks(runId: string, chunkCount: number): Promise<TaskRunChunk[]> {
    const keys = Array.from({ length: chunkCount }, (_, chunk) => taskRunChunkKey(runId, chunk));
    const items = await batchGetAll(this.options.client, this.table, keys);
    const byChunk = new Map(items.map((item) => [item.chunk as number, unpack<TaskRunChunk>(item.data as Uint8Array)]));
    return keys.map((_, chunk) => {
      const found = byChunk.get(chunk);
      if (!found) throw new TaskRunNotFoundError(runId, `chunk ${chunk} of ${chunkCount} is missing`);
      return found;
    });
  }

  async putChunks(runId: string, chunks: ReadonlyMap<number, TaskRunChunk>): Promise<void> {
    await batchWriteAll(
      this.options.client,
      this.table,
      [...chunks].map(([chunk, content]) => ({ PutRequest: { Item: { ...taskRunChunkKey(runId, chunk), chunk, data: pack(content) } } })),
    );
  }

  async requestStop(runId: string): Promise<TaskRunRecord> {
    const out = await conditionalWrite(
      this.options.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: taskRunKey(runId),
          UpdateExpression: 'SET #status = :stopping',
          // A group's deploy phase stops with its deployment (stopped alone, its group would be judged on work it never did).
          ConditionExpression: '#status IN (:running, :stopping) AND attribute_not_exists(deployment)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':running': 'RUNNING' satisfies TaskRunStatus, ':stopping': 'STOPPING' satisfies TaskRunStatus },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (out !== CONDITION_FAILED) return toRecord(out.Attributes ?? {});
    const current = await this.getRun(runId);
    if (!current) throw new TaskRunNotFoundError(runId);
    if (current.deployment)
      throw new SessionNotStoppableError(runId, `the deploy phase of deployment ${current.deployment.deploymentId} (stop the deployment)`);
    throw new SessionNotStoppableError(runId, current.status);
  }

  async reopenStopped(runId: string): Promise<TaskRunRecord> {
    const out = await conditionalWrite(
      this.options.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: taskRunKey(runId),
          UpdateExpression: 'SET #status = :running REMOVE finishedAt',
          // A person's resume carries it on: a stop not finished is withdrawn, a STOPPED run reopens (core/session-control.ts).
          ConditionExpression: '#status IN (:stopping, :stopped)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':running': 'RUNNING' satisfies TaskRunStatus,
            ':stopping': RESUME_CARRIES_ON[0] satisfies TaskRunStatus,
            ':stopped': RESUME_CARRIES_ON[1] satisfies TaskRunStatus,
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (out !== CONDITION_FAILED) return toRecord(out.Attributes ?? {});
    const current = await this.getRun(runId);
    if (!current) throw new TaskRunNotFoundError(runId);
    return current;
  }

  async noteGeneration(runId: string, generation: number): Promise<void> {
    await conditionalWrite(
      this.options.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: taskRunKey(runId),
          UpdateExpression: 'SET #generation = :g',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#generation) OR #generation < :g)',
          ExpressionAttributeNames: { '#generation': 'generation' },
          ExpressionAttributeValues: { ':g': generation },
        }),
      ),
    );
  }

  async commitIncrement(
    runId: string,
    expectedIncrement: number,
    update: Pick<TaskRunRecord, 'schedule' | 'counts' | 'status'> & { finishedAt?: number },
  ): Promise<void> {
    // Only an end (or a stop) is written: RUNNING or CANCELLING stays as stored, so a cancel written since the read stands.
    const ends = ENDED_TASK_RUN_STATUSES.includes(update.status) || update.status === 'STOPPED';
    const written = await conditionalWrite(
      this.options.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: taskRunKey(runId),
          UpdateExpression: `SET scheduleGz = :s, counts = :c, #increment = :next${ends ? ', #status = :st' : ''}${update.finishedAt === undefined ? '' : ', finishedAt = :f'}`,
          ConditionExpression: '#increment = :v',
          ExpressionAttributeNames: { '#increment': 'increment', ...(ends ? { '#status': 'status' } : {}) },
          ExpressionAttributeValues: {
            ':s': pack(update.schedule),
            ':c': update.counts,
            ...(ends ? { ':st': update.status } : {}),
            ':v': expectedIncrement,
            ':next': expectedIncrement + 1,
            ...(update.finishedAt === undefined ? {} : { ':f': update.finishedAt }),
          },
        }),
      ),
    );
    if (written === CONDITION_FAILED) throw new StaleWriteError(`task run ${runId}`, `increment ${expectedIncrement}`);
  }
}

function toRecord(item: Record<string, unknown>): TaskRunRecord {
  const { scheduleGz, ...rest } = withoutKeys<StoredRecord>(item);
  return { ...rest, schedule: unpack<ScheduleFields>(scheduleGz) };
}
