import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ScheduleRecord } from '../../core/run-schedules/schedule';
import type { ScheduleStore } from '../../ports/schedule-store';
import { CONDITION_FAILED, conditionalWrite, withoutKeys, withoutUndefined } from './items';
import { queryAll } from './query';
import { PARTITION_KEY, scheduleKey, SCHEDULE_SK_PREFIX, SCHEDULES_PK, SORT_KEY } from './table-design';

/** ScheduleStore on the rollout table: one item per schedule, each write a single-item conditional one. */
export class DynamoDbScheduleStore implements ScheduleStore {
  constructor(private readonly options: { tableName: string; client: DynamoDBDocumentClient }) {}

  async createSchedule(record: ScheduleRecord): Promise<boolean> {
    const written = await conditionalWrite(
      this.options.client.send(
        new PutCommand({
          TableName: this.options.tableName,
          Item: { ...scheduleKey(record.groupName, record.name), ...withoutUndefined(record) },
          ConditionExpression: `attribute_not_exists(${PARTITION_KEY})`,
        }),
      ),
    );
    return written !== CONDITION_FAILED;
  }

  async getSchedule(groupName: string, name: string): Promise<ScheduleRecord | undefined> {
    const got = await this.options.client.send(new GetCommand({ TableName: this.options.tableName, Key: scheduleKey(groupName, name), ConsistentRead: true }));
    return got.Item ? withoutKeys<ScheduleRecord>(got.Item) : undefined;
  }

  async listSchedules(groupName?: string): Promise<ScheduleRecord[]> {
    const items = await queryAll(this.options.client, {
      TableName: this.options.tableName,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#sk': SORT_KEY },
      ExpressionAttributeValues: { ':pk': SCHEDULES_PK, ':prefix': groupName === undefined ? SCHEDULE_SK_PREFIX : `${SCHEDULE_SK_PREFIX}${groupName}#` },
      ConsistentRead: true,
    });
    return items.map((item) => withoutKeys<ScheduleRecord>(item));
  }

  async deleteSchedule(groupName: string, name: string): Promise<boolean> {
    const deleted = await conditionalWrite(
      this.options.client.send(
        new DeleteCommand({ TableName: this.options.tableName, Key: scheduleKey(groupName, name), ConditionExpression: `attribute_exists(${PARTITION_KEY})` }),
      ),
    );
    return deleted !== CONDITION_FAILED;
  }
}
