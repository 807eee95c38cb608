import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { RunStart, RunStartStore } from '../../ports/run-start-store';
import { conditionalWrite, withoutKeys, withoutUndefined } from './items';
import { runStartKey } from './table-design';

/** RunStartStore on the rollout table: one item per started run, in a partition of its own (see table-design.ts). */
export class DynamoDbRunStartStore implements RunStartStore {
  constructor(private readonly options: { tableName: string; client: DynamoDBDocumentClient }) {}

  async accept(start: Omit<RunStart, 'refused'>): Promise<void> {
    // A refusal written first (the first state can be that quick) stays.
    await conditionalWrite(
      this.options.client.send(
        new PutCommand({
          TableName: this.options.tableName,
          Item: withoutUndefined({ ...runStartKey(start.id), ...start }),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  async refuse(start: Omit<RunStart, 'executionArn'> & { refused: NonNullable<RunStart['refused']> }): Promise<void> {
    await this.options.client.send(new PutCommand({ TableName: this.options.tableName, Item: withoutUndefined({ ...runStartKey(start.id), ...start }) }));
  }

  async remove(id: string): Promise<void> {
    await this.options.client.send(new DeleteCommand({ TableName: this.options.tableName, Key: runStartKey(id) }));
  }

  async get(id: string): Promise<RunStart | undefined> {
    const { Item } = await this.options.client.send(new GetCommand({ TableName: this.options.tableName, Key: runStartKey(id), ConsistentRead: true }));
    return Item ? withoutKeys<RunStart>(Item) : undefined;
  }
}
