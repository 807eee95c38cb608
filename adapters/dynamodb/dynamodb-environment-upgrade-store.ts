import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { upgradeHasEnded, type EnvironmentUpgradeSession, type EnvironmentUpgradeState } from '../../core/environments';
import { SessionNotCancellableError, SessionNotFoundError, StaleWriteError } from '../../core/errors';
import type { EnvironmentUpgradeStore, StoredEnvironmentUpgrade } from '../../ports/environment-upgrade-store';
import { ITEM_ON_FAILURE, conditionalWrite, conditionalWriteOrItem, withoutUndefined } from './items';
import { queryAll } from './query';
import {
  ENVIRONMENT_UPGRADES_GSI_PARTITION,
  GSI1_PARTITION_KEY,
  GSI1_SORT_KEY,
  SESSIONS_BY_CREATION_INDEX,
  environmentClaimKey,
  environmentUpgradeKey,
} from './table-design';

/** Rounds of a claim or cancel that keeps losing races before it gives up (each round is one read and one write). */
const MAX_ROUNDS = 3;

/** The session as saved, with the generation noted beside it (noteGeneration writes it apart from the saves). */
const toStored = (item: Record<string, unknown>): StoredEnvironmentUpgrade => ({
  session: {
    ...(item['session'] as EnvironmentUpgradeSession),
    ...(typeof item['generation'] === 'number' ? { generation: item['generation'] } : {}),
  },
  revision: item['revision'] as number,
});

/** EnvironmentUpgradeStore on the rollout table: one item per session, listed by the sessions index; see table-design.ts. */
export class DynamoDbEnvironmentUpgradeStore implements EnvironmentUpgradeStore {
  constructor(private readonly options: { tableName: string; client: DynamoDBDocumentClient }) {}

  private get table() {
    return this.options.tableName;
  }

  async createUpgrade(session: EnvironmentUpgradeSession): Promise<StoredEnvironmentUpgrade> {
    const item = {
      ...environmentUpgradeKey(session.upgradeId),
      [GSI1_PARTITION_KEY]: ENVIRONMENT_UPGRADES_GSI_PARTITION,
      [GSI1_SORT_KEY]: `${session.createdAt}#${session.upgradeId}`,
      session: withoutUndefined(session),
      revision: 0,
    };
    const put = await conditionalWriteOrItem(
      // Created already (a retried start): the failed write returns it, no read after it.
      this.options.client.send(new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)', ...ITEM_ON_FAILURE })),
    );
    if ('written' in put) return { session, revision: 0 };
    return toStored(put.failed!);
  }

  async getUpgrade(upgradeId: string): Promise<StoredEnvironmentUpgrade | undefined> {
    const { Item } = await this.options.client.send(new GetCommand({ TableName: this.table, Key: environmentUpgradeKey(upgradeId), ConsistentRead: true }));
    return Item ? toStored(Item) : undefined;
  }

  async listUpgrades(): Promise<EnvironmentUpgradeSession[]> {
    const items = await queryAll(this.options.client, {
      TableName: this.table,
      IndexName: SESSIONS_BY_CREATION_INDEX,
      KeyConditionExpression: '#p = :p',
      ExpressionAttributeNames: { '#p': GSI1_PARTITION_KEY },
      ExpressionAttributeValues: { ':p': ENVIRONMENT_UPGRADES_GSI_PARTITION },
      ScanIndexForward: false,
    });
    return items.map((item) => toStored(item).session);
  }

  async noteGeneration(upgradeId: string, generation: number): Promise<void> {
    await conditionalWrite(
      this.options.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: environmentUpgradeKey(upgradeId),
          UpdateExpression: 'SET #generation = :g',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#generation) OR #generation < :g)',
          ExpressionAttributeNames: { '#generation': 'generation' },
          ExpressionAttributeValues: { ':g': generation },
        }),
      ),
    );
  }

  async saveUpgrade(session: EnvironmentUpgradeSession, revision: number): Promise<void> {
    await conditionalWrite(
      this.options.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: environmentUpgradeKey(session.upgradeId),
          UpdateExpression: 'SET #session = :session, #revision = :next',
          ConditionExpression: '#revision = :revision',
          ExpressionAttributeNames: { '#session': 'session', '#revision': 'revision' },
          ExpressionAttributeValues: { ':session': withoutUndefined(session), ':revision': revision, ':next': revision + 1 },
        }),
      ),
      (cause) => new StaleWriteError(`environment upgrade ${session.upgradeId}`, `revision ${revision}`, { cause }),
    );
  }

  async requestCancel(upgradeId: string): Promise<EnvironmentUpgradeSession> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const stored = await this.getUpgrade(upgradeId);
      if (!stored) throw new SessionNotFoundError(upgradeId);
      const { session, revision } = stored;
      if (session.state !== 'UPDATING' || upgradeHasEnded(session)) throw new SessionNotCancellableError(upgradeId, session.state);
      const cancelled: EnvironmentUpgradeSession = { ...session, state: 'DELETING' satisfies EnvironmentUpgradeState };
      try {
        await this.saveUpgrade(cancelled, revision);
        return cancelled;
      } catch (err) {
        // An increment saved meanwhile: read it again.
        if (!(err instanceof StaleWriteError)) throw err;
      }
    }
    throw new SessionNotCancellableError(upgradeId, 'changing state');
  }

  async claimEnvironment(environmentId: number, upgradeId: string): Promise<string | undefined> {
    let holder = await this.claimHolder(environmentId);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (holder === upgradeId) return undefined;
      if (holder !== undefined && (await this.isActive(holder))) return holder;
      // Free, or held by a session that has ended: take it, on the condition that nobody else did meanwhile.
      const taken = await conditionalWriteOrItem(
        this.options.client.send(
          new PutCommand({
            TableName: this.table,
            Item: { ...environmentClaimKey(environmentId), upgradeId },
            ConditionExpression: holder === undefined ? 'attribute_not_exists(pk)' : 'upgradeId = :holder',
            ...(holder === undefined ? {} : { ExpressionAttributeValues: { ':holder': holder } }),
            // Someone claimed it meanwhile: the failed write names them, no read after it.
            ...ITEM_ON_FAILURE,
          }),
        ),
      );
      if ('written' in taken) return undefined;
      holder = taken.failed?.['upgradeId'] as string | undefined;
    }
    return holder;
  }

  async deleteUpgrade(upgradeId: string): Promise<void> {
    await this.options.client.send(new DeleteCommand({ TableName: this.table, Key: environmentUpgradeKey(upgradeId) }));
  }

  async activeUpgradeOf(environmentId: number): Promise<string | undefined> {
    const holder = await this.claimHolder(environmentId);
    return holder !== undefined && (await this.isActive(holder)) ? holder : undefined;
  }

  private async claimHolder(environmentId: number): Promise<string | undefined> {
    const { Item } = await this.options.client.send(new GetCommand({ TableName: this.table, Key: environmentClaimKey(environmentId), ConsistentRead: true }));
    return Item ? (Item['upgradeId'] as string) : undefined;
  }

  /** A claim whose session was never stored (a crash between claim and create) holds nothing. */
  private async isActive(upgradeId: string): Promise<boolean> {
    const stored = await this.getUpgrade(upgradeId);
    return stored !== undefined && !upgradeHasEnded(stored.session);
  }
}
