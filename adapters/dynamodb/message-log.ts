import { randomBytes } from 'node:crypto';
import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../../core/clock';
import type { RunMessages } from '../../ports/run-messages';
import { queryAll } from './query';
import { MSG_SK_PREFIX, messageSk } from './table-design';

/**
 * A run's messages in its own partition (`MSG#<epoch ms>#<hex>` items beside the run's record):
 * upgrades, deployments and task runs keep theirs the same way, so a removal of the partition
 * takes them along.
 */
export class DynamoDbMessageLog implements RunMessages {
  /**
   * Last epoch ms used in each run's message keys, kept strictly increasing so that its messages
   * keep their order, across processes too: a resumed run (whose clock may restart earlier, as the
   * simulated one does) starts after the newest stored message.
   */
  private readonly lastMessageMs = new Map<string, number>();

  constructor(private readonly options: { tableName: string; client: DynamoDBDocumentClient; clock: Clock; partitionOf: (id: string) => string }) {}

  async append(id: string, message: string): Promise<void> {
    const now = this.options.clock.now();
    if (!this.lastMessageMs.has(id)) {
      const newest = await this.newestMessageMs(id);
      // A concurrent append may have set it meanwhile: never move it back.
      this.lastMessageMs.set(id, Math.max(newest, this.lastMessageMs.get(id) ?? 0));
    }
    const keyMs = Math.max(now, this.lastMessageMs.get(id)! + 1);
    this.lastMessageMs.set(id, keyMs);
    await this.options.client.send(
      new PutCommand({
        TableName: this.options.tableName,
        Item: { pk: this.options.partitionOf(id), sk: messageSk(keyMs, randomBytes(3).toString('hex')), text: message, at: new Date(now).toISOString() },
      }),
    );
  }

  async latest(id: string): Promise<string | undefined> {
    return (await this.newestMessage(id))?.text as string | undefined;
  }

  async list(id: string): Promise<string[]> {
    const items = await queryAll(this.options.client, {
      TableName: this.options.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': this.options.partitionOf(id), ':prefix': MSG_SK_PREFIX },
      ProjectionExpression: '#text',
      ExpressionAttributeNames: { '#text': 'text' },
      ConsistentRead: true,
    });
    return items.map((item) => item.text as string);
  }

  async listTimed(id: string): Promise<{ at: string; text: string }[]> {
    const items = await queryAll(this.options.client, {
      TableName: this.options.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': this.options.partitionOf(id), ':prefix': MSG_SK_PREFIX },
      ProjectionExpression: '#text, #at',
      ExpressionAttributeNames: { '#text': 'text', '#at': 'at' },
      ConsistentRead: true,
    });
    return items.map((item) => ({ at: item.at as string, text: item.text as string }));
  }

  async recent(id: string, limit: number): Promise<{ at: string; text: string }[]> {
    if (limit <= 0) return [];
    // Newest first, one page of at most `limit` items (DynamoDB counts the limit before a filter; there is none).
    const out = await this.options.client.send(
      new QueryCommand({
        TableName: this.options.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': this.options.partitionOf(id), ':prefix': MSG_SK_PREFIX },
        ProjectionExpression: '#text, #at',
        ExpressionAttributeNames: { '#text': 'text', '#at': 'at' },
        ScanIndexForward: false,
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    return (out.Items ?? []).reverse().map((item) => ({ at: item.at as string, text: item.text as string }));
  }

  /** Forgets a removed run's last key time. */
  forget(id: string): void {
    this.lastMessageMs.delete(id);
  }

  /** Epoch ms in the key of the run's newest message (0 if none). */
  private async newestMessageMs(id: string): Promise<number> {
    const sk = (await this.newestMessage(id))?.sk as string | undefined;
    return sk ? Number(sk.slice(MSG_SK_PREFIX.length).split('#')[0]) : 0;
  }

  private async newestMessage(id: string): Promise<Record<string, unknown> | undefined> {
    const out = await this.options.client.send(
      new QueryCommand({
        TableName: this.options.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': this.options.partitionOf(id), ':prefix': MSG_SK_PREFIX },
        ProjectionExpression: 'sk, #text',
        ExpressionAttributeNames: { '#text': 'text' },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    return out.Items?.[0];
  }
}
