import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SessionNotStoppableError, StaleWriteError, TaskRunNotFoundError } from '../../core/errors';
import type { ScheduleFields, TaskRunChunk, TaskRunPlan } from '../../core/task-graph';
import type { TaskRunRecord, TaskRunStatus, TaskRunStore } from '../../ports/task-run-store';
import { batchGetAll, batchWriteAll } from './batch';
import { CONDITION_FAILED, conditionalWrite, withoutKeys, withoutUndefined } from './items';
import { pack, packParts, unpack, unpackParts } from './packed';
import { queryAll } from './query';
import { TASK_RUN_PLAN_SK_PREFIX, taskRunChunkKey, taskRunKey, taskRunPk, taskRunPlanKey } from './table-design';

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

  constructor(private readonly options: { tableName: string; client: DynamoDBDocumentClient }) {}

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
          Item: { ...taskRunKey(record.runId), ...withoutUndefined(rest), increment: 0, scheduleGz: pack(schedule) },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  async getRun(runId: string): Promise<TaskRunRecord | undefined> {
    const { Item } = await this.options.client.send(new GetCommand({ TableName: this.table, Key: taskRunKey(runId), ConsistentRead: true }));
    if (!Item) return undefined;
    const { scheduleGz, ...rest } = withoutKeys<StoredRecord>(Item);
    return { ...rest, schedule: unpack<ScheduleFields>(scheduleGz) };
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
    const written = await conditionalWrite(
      this.options.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: taskRunKey(runId),
          UpdateExpression: 'SET stopRequested = :true',
          ConditionExpression: '#status = :running',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':true': true, ':running': 'RUNNING' satisfies TaskRunStatus },
        }),
      ),
    );
    const current = await this.getRun(runId);
    if (!current) throw new TaskRunNotFoundError(runId);
    if (written === CONDITION_FAILED) throw new SessionNotStoppableError(runId, current.status);
    return current;
  }

  async commitIncrement(runId: string, expectedIncrement: number, update: Pick<TaskRunRecord, 'schedule' | 'counts' | 'status'> & { finishedAt?: number }): Promise<void> {
    const written = await conditionalWrite(
      this.options.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: taskRunKey(runId),
          UpdateExpression: `SET scheduleGz = :s, counts = :c, #status = :st, #increment = :next${update.finishedAt === undefined ? '' : ', finishedAt = :f'}`,
          ConditionExpression: '#increment = :v',
          ExpressionAttributeNames: { '#status': 'status', '#increment': 'increment' },
          ExpressionAttributeValues: {
            ':s': pack(update.schedule),
            ':c': update.counts,
            ':st': update.status,
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
