import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { StaleWriteError, TaskRunNotFoundError } from '../../core/errors';
import { RUN_RESUME } from '../../core/run-status';
import type { ScheduleFields, TaskRunChunk, TaskRunPlan } from '../../core/task-graph';
import { ENDED_TASK_RUN_STATUSES, type TaskRunRecord, type TaskRunStatus, type TaskRunStore } from '../../ports/task-run-store';
import { batchGetAll, batchWriteAll } from './batch';
import { CONDITION_FAILED, conditionalWrite, withoutKeys, withoutUndefined } from './items';
import { pack, packParts, unpack, unpackParts } from './packed';
import { queryAll } from './query';
import { DynamoDbRunStore, runStatusRecordDesign, type DynamoDbRunStoreOptions } from './run-store';
import {
  GSI1_PARTITION_KEY,
  GSI1_SORT_KEY,
  TASK_RUN_PLAN_SK_PREFIX,
  TASK_RUNS_GSI_PARTITION,
  taskRunChunkKey,
  taskRunKey,
  taskRunPk,
  taskRunPlanKey,
} from './table-design';

/** Plans never change: a warm Lambda container reads each one once. */
const PLAN_CACHE_SIZE = 16;

interface StoredRecord extends Omit<TaskRunRecord, 'schedule'> {
  scheduleGz: Uint8Array;
}

/** A task run's record: its status moved by core's rules for runs (core/run-status.ts), as a deployment's. */
export const TASK_RUN_RECORD = runStatusRecordDesign<TaskRunRecord>({
  key: taskRunKey,
  partition: taskRunPk,
  listedUnder: TASK_RUNS_GSI_PARTITION,
  fromItem: toRecord,
  notFound: (runId) => new TaskRunNotFoundError(runId),
  ended: ENDED_TASK_RUN_STATUSES,
  // A group's deploy phase is cancelled and stopped with its deployment (alone, its group would be judged on work it never did).
  reachable: {
    condition: 'attribute_not_exists(deployment)',
    refusal: (record, request) => record.deployment && `the deploy phase of deployment ${record.deployment.deploymentId} (${request} the deployment)`,
  },
});

/**
 * TaskRunStore on the rollout table: the plan gzipped in parts (written once), the nodes' task
 * states gzipped per chunk (a chunk is rewritten only when one of its tasks changed), and the
 * record, whose `increment` guards each pass of the annealer.
 */
export class DynamoDbTaskRunStore extends DynamoDbRunStore<TaskRunRecord, TaskRunStatus> implements TaskRunStore {
  private readonly plans = new Map<string, TaskRunPlan>();

  constructor(options: DynamoDbRunStoreOptions) {
    super(options, TASK_RUN_RECORD);
  }

  async createRun(record: Omit<TaskRunRecord, 'increment'>, plan: TaskRunPlan, chunks: readonly TaskRunChunk[]): Promise<void> {
    if (await this.getRun(record.runId)) return;
    const client = this.client;
    await batchWriteAll(
      client,
      this.tableName,
      packParts(plan).map((data, part) => ({ PutRequest: { Item: { ...taskRunPlanKey(record.runId, part), data } } })),
    );
    await this.putChunks(record.runId, new Map(chunks.map((chunk, i) => [i, chunk])));
    const { schedule, ...rest } = record;
    // A concurrent create of the same run that wrote first wins: its chunks equal ours (the same plan, all proposed).
    await conditionalWrite(
      client.send(
        new PutCommand({
          TableName: this.tableName,
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

  getRun(runId: string): Promise<TaskRunRecord | undefined> {
    return this.read(runId);
  }

  async getPlan(runId: string): Promise<TaskRunPlan> {
    const cached = this.plans.get(runId);
    if (cached) return cached;
    const items = await queryAll(this.client, {
      TableName: this.tableName,
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
    const items = await batchGetAll(this.client, this.tableName, keys);
    const byChunk = new Map(items.map((item) => [item.chunk as number, unpack<TaskRunChunk>(item.data as Uint8Array)]));
    return keys.map((_, chunk) => {
      const found = byChunk.get(chunk);
      if (!found) throw new TaskRunNotFoundError(runId, `chunk ${chunk} of ${chunkCount} is missing`);
      return found;
    });
  }

  async putChunks(runId: string, chunks: ReadonlyMap<number, TaskRunChunk>): Promise<void> {
    await batchWriteAll(
      this.client,
      this.tableName,
      [...chunks].map(([chunk, content]) => ({ PutRequest: { Item: { ...taskRunChunkKey(runId, chunk), chunk, data: pack(content) } } })),
    );
  }

  async reopenStopped(runId: string): Promise<TaskRunRecord> {
    // A person's resume carries it on: a stop not finished is withdrawn, a STOPPED run reopens; any other is returned as it is.
    const out = await this.transition(runId, RUN_RESUME, { remove: 'finishedAt' });
    return 'moved' in out ? out.moved : out.refused;
  }

  async commitIncrement(
    runId: string,
    expectedIncrement: number,
    update: Pick<TaskRunRecord, 'schedule' | 'counts' | 'status'> & { finishedAt?: number },
  ): Promise<void> {
    // Only an end (or a stop) is written: RUNNING or CANCELLING stays as stored, so a cancel written since the read stands.
    const ends = ENDED_TASK_RUN_STATUSES.includes(update.status) || update.status === 'STOPPED';
    const written = await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
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
