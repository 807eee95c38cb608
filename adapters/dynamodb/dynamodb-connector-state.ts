import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { systemClock, type Clock } from '../../core/clock';
import type { ConnectorRecords, ConnectorState, ConnectorStateKind } from '../../ports/connector-state';
import { ConnectorRecordMissingError } from '../errors';
import { ITEM_ON_FAILURE, conditionalWrite, conditionalWriteOrItem, withoutUndefined } from './items';
import { connectorRecordKey, PARTITION_KEY, TTL_ATTRIBUTE } from './table-design';

/** A boot session or an action matters for hours; the table forgets it (on AWS, through TTL) after this. */
const RECORD_TTL_SECONDS = 90 * 24 * 3600;

export interface DynamoDbConnectorStateOptions {
  tableName: string;
  client: DynamoDBDocumentClient;
  /** Wall time for the TTL attribute (AWS expires items by it). Default: system time. */
  clock?: Clock;
}

/**
 * ConnectorState on the rollout table: one item per record (see table-design.ts), created with a
 * single-item conditional put so that a retried or concurrent request finds the first one.
 */
export class DynamoDbConnectorState implements ConnectorState {
  constructor(private readonly options: DynamoDbConnectorStateOptions) {}

  records<T extends { name: string }>(kind: ConnectorStateKind): ConnectorRecords<T> {
    const { tableName, client } = this.options;
    const clock = this.options.clock ?? systemClock;
    const get = async (name: string): Promise<T | undefined> => {
      const out = await client.send(new GetCommand({ TableName: tableName, Key: connectorRecordKey(kind, name), ConsistentRead: true }));
      return out.Item?.record as T | undefined;
    };
    const put = (record: T, condition: string) =>
      client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...connectorRecordKey(kind, record.name),
            kind,
            record: withoutUndefined(record),
            [TTL_ATTRIBUTE]: Math.floor(clock.now() / 1000) + RECORD_TTL_SECONDS,
          },
          ConditionExpression: condition,
          ...ITEM_ON_FAILURE,
        }),
      );
    const create = async (record: T, attempt = 1): Promise<{ record: T; created: boolean }> => {
      const written = await conditionalWriteOrItem(put(record, `attribute_not_exists(${PARTITION_KEY})`));
      if ('written' in written) return { record, created: true };
      // The first one, from the failed write itself (no read after it).
      const existing = written.failed?.['record'] as T | undefined;
      if (existing) return { record: existing, created: false };
      // Gone since (TTL): write ours, once more.
      if (attempt < 2) return create(record, attempt + 1);
      throw new ConnectorRecordMissingError(kind, record.name);
    };
    const update = async (record: T): Promise<void> => {
      await conditionalWrite(put(record, `attribute_exists(${PARTITION_KEY})`), () => new ConnectorRecordMissingError(kind, record.name));
    };
    return { get, create, update };
  }
}
