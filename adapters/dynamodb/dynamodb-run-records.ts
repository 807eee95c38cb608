import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { RunRecord, RunRecords } from '../../ports/run-records';
import { batchGetAll } from './batch';
import { DEPLOYMENT_RECORD } from './dynamodb-deployment-store';
import { SESSION_RECORD } from './dynamodb-session-store';
import { TASK_RUN_RECORD } from './dynamodb-task-run-store';
import type { RunRecordDesign } from './run-store';

/**
 * RunRecords on the rollout table: the three kinds' records live in one table under keys the id alone
 * gives (SESSION#<id>, DEPLOYMENT#<id>, TASKRUN#<id>), so one BatchGetItem of the three keys (read
 * consistently; keys it leaves unprocessed are asked again with backoff, as DynamoDB asks: batchGetAll)
 * answers which kind the id is and its record. Each item becomes its record by its own store's design
 * (fromItem): no second reading of an item.
 */
export class DynamoDbRunRecords implements RunRecords {
  private readonly tableName: string;
  private readonly client: DynamoDBDocumentClient;

  constructor(options: { tableName: string; client: DynamoDBDocumentClient }) {
    this.tableName = options.tableName;
    this.client = options.client;
  }

  async find(id: string): Promise<RunRecord | undefined> {
    const items = await batchGetAll(this.client, this.tableName, [SESSION_RECORD.key(id), DEPLOYMENT_RECORD.key(id), TASK_RUN_RECORD.key(id)]);
    // BatchGetItem answers in no particular order: each kind takes the item at its own key, in RunRecords' order.
    const recordOf = <Run>(design: Pick<RunRecordDesign<Run, string>, 'key' | 'fromItem'>): Run | undefined => {
      const { pk, sk } = design.key(id);
      const item = items.find((found) => found['pk'] === pk && found['sk'] === sk);
      return item && design.fromItem(item);
    };
    const upgrade = recordOf(SESSION_RECORD);
    if (upgrade) return { kind: 'upgrade', record: upgrade };
    const deployment = recordOf(DEPLOYMENT_RECORD);
    if (deployment) return { kind: 'deployment', record: deployment };
    const taskRun = recordOf(TASK_RUN_RECORD);
    return taskRun && { kind: 'tasks', record: taskRun };
  }
}
