import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SiteEvent, SiteEventStore } from '../../ports/site-event-store';
import { CONDITION_FAILED, conditionalWrite, withoutKeys } from './items';
import { queryAll } from './query';
import { SITE_EVENT_SK_PREFIX, SITE_EVENTS_PK, siteEventKey, TTL_ATTRIBUTE } from './table-design';

/** How long a firing's id is remembered: a relay retries a spooled firing for hours at most, never a week. */
export const SITE_EVENT_RETENTION_SECONDS = 7 * 24 * 3600;

/** SiteEventStore on the rollout table: one item per firing, written only if its id is new (a conditional put). */
export class DynamoDbSiteEventStore implements SiteEventStore {
  constructor(private readonly options: { tableName: string; client: DynamoDBDocumentClient }) {}

  async record(event: SiteEvent): Promise<boolean> {
    const expiresAt = Math.floor(Date.parse(event.receivedAt) / 1000) + SITE_EVENT_RETENTION_SECONDS;
    const written = await conditionalWrite(
      this.options.client.send(
        new PutCommand({
          TableName: this.options.tableName,
          Item: { ...siteEventKey(event.id), ...event, [TTL_ATTRIBUTE]: expiresAt },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    return written !== CONDITION_FAILED;
  }

  async list(): Promise<SiteEvent[]> {
    const items = await queryAll(this.options.client, {
      TableName: this.options.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': SITE_EVENTS_PK, ':prefix': SITE_EVENT_SK_PREFIX },
      ConsistentRead: true,
    });
    return items
      .map((item) => {
        const { [TTL_ATTRIBUTE]: _expiresAt, ...event } = withoutKeys<SiteEvent & { [TTL_ATTRIBUTE]?: number }>(item);
        return event as SiteEvent;
      })
      .sort((a, b) => a.receivedAt.localeCompare(b.receivedAt) || a.id.localeCompare(b.id));
  }
}
