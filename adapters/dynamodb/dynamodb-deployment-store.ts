import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeploymentNotFoundError, SessionNotCancellableError, SessionNotStoppableError, StaleWriteError } from '../../core/errors';
import { RESUME_CARRIES_ON, resumeCarriesOn } from '../../core/session-control';
import type { DeploymentPhase, DeploymentPlan, DeploymentRunState } from '../../core/group-deployment';
import { ENDED_DEPLOYMENT_STATUSES, type BatchResult, type DeploymentRecord, type DeploymentStatus, type DeploymentStore } from '../../ports/deployment-store';
import { CONDITION_FAILED, conditionalWrite, withoutKeys } from './items';
import type { Clock } from '../../core/clock';
import { systemClock } from '../../core/clock';
import { DynamoDbMessageLog } from './message-log';
import { pack, packParts, unpack, unpackParts } from './packed';
import { batchWriteAll } from './batch';
import { queryAll } from './query';
import {
  batchResultKey,
  batchResultPrefix,
  deploymentKey,
  deploymentPk,
  deploymentPlanKey,
  DEPLOYMENT_PLAN_SK_PREFIX,
  DEPLOYMENTS_GSI_PARTITION,
  GSI1_PARTITION_KEY,
  GSI1_SORT_KEY,
  SESSIONS_BY_CREATION_INDEX,
} from './table-design';

/** Plans never change: a warm Lambda container reads each one once. */
const PLAN_CACHE_SIZE = 16;

interface StoredRecord extends Omit<DeploymentRecord, 'state'> {
  stateGz: Uint8Array;
  planParts: number;
}

/**
 * DeploymentStore on the rollout table. The run state is one gzipped attribute replaced under a
 * version check (a 10,000-node state packs to tens of KB), so the pure domain reducer stays the one
 * place where stages change; the plan is written once, in gzipped parts.
 */
export class DynamoDbDeploymentStore implements DeploymentStore {
  private readonly plans = new Map<string, DeploymentPlan>();
  private readonly messages: DynamoDbMessageLog;

  constructor(private readonly options: { tableName: string; client: DynamoDBDocumentClient; clock?: Clock }) {
    this.messages = new DynamoDbMessageLog({
      tableName: options.tableName,
      client: options.client,
      clock: options.clock ?? systemClock,
      partitionOf: deploymentPk,
    });
  }

  appendMessage(deploymentId: string, message: string): Promise<void> {
    return this.messages.appendMessage(deploymentId, message);
  }

  listMessages(deploymentId: string): Promise<string[]> {
    return this.messages.listMessages(deploymentId);
  }

  listTimedMessages(deploymentId: string): Promise<{ at: string; text: string }[]> {
    return this.messages.listTimedMessages(deploymentId);
  }

  latestMessage(deploymentId: string): Promise<string | undefined> {
    return this.messages.latestMessage(deploymentId);
  }

  private get table() {
    return this.options.tableName;
  }

  async createDeployment(record: Omit<DeploymentRecord, 'version'>, plan: DeploymentPlan): Promise<void> {
    const { client } = this.options;
    if (await this.getDeployment(record.deploymentId)) return;
    const parts = packParts(plan);
    for (const [part, data] of parts.entries()) {
      await client.send(new PutCommand({ TableName: this.table, Item: { ...deploymentPlanKey(record.deploymentId, part), data } }));
    }
    const { state, ...rest } = record;
    const item: StoredRecord & Record<string, unknown> = { ...rest, version: 0, stateGz: pack(state), planParts: parts.length };
    await conditionalWrite(
      client.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            ...deploymentKey(record.deploymentId),
            [GSI1_PARTITION_KEY]: DEPLOYMENTS_GSI_PARTITION,
            [GSI1_SORT_KEY]: `${record.createdAt}#${record.deploymentId}`,
            ...item,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  async getDeployment(deploymentId: string): Promise<DeploymentRecord | undefined> {
    const { Item } = await this.options.client.send(new GetCommand({ TableName: this.table, Key: deploymentKey(deploymentId), ConsistentRead: true }));
    return Item ? toRecord(Item) : undefined;
  }

  async listDeployments(): Promise<DeploymentRecord[]> {
    const items = await queryAll(this.options.client, {
      TableName: this.table,
      IndexName: SESSIONS_BY_CREATION_INDEX,
      KeyConditionExpression: '#p = :p',
      ExpressionAttributeNames: { '#p': GSI1_PARTITION_KEY },
      ExpressionAttributeValues: { ':p': DEPLOYMENTS_GSI_PARTITION },
      ScanIndexForward: false,
    });
    return items.map(toRecord);
  }

  async getPlan(deploymentId: string): Promise<DeploymentPlan> {
    const cached = this.plans.get(deploymentId);
    if (cached) return cached;
    const items = await queryAll(this.options.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': deploymentPk(deploymentId), ':prefix': DEPLOYMENT_PLAN_SK_PREFIX },
      ConsistentRead: true,
    });
    if (items.length === 0) throw new DeploymentNotFoundError(deploymentId, 'no plan stored');
    const plan = unpackParts<DeploymentPlan>(items);
    if (this.plans.size >= PLAN_CACHE_SIZE) this.plans.delete(this.plans.keys().next().value!);
    this.plans.set(deploymentId, plan);
    return plan;
  }

  async saveState(deploymentId: string, expectedVersion: number, state: DeploymentRunState): Promise<void> {
    await conditionalWrite(
      this.options.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: deploymentKey(deploymentId),
          UpdateExpression: 'SET stateGz = :s, version = :next',
          ConditionExpression: 'version = :v',
          ExpressionAttributeValues: { ':s': pack(state), ':v': expectedVersion, ':next': expectedVersion + 1 },
        }),
      ),
      (cause) => new StaleWriteError(`deployment ${deploymentId} run state`, `version ${expectedVersion}`, { cause }),
    );
  }

  async setStatus(deploymentId: string, status: DeploymentStatus): Promise<void> {
    await this.options.client.send(
      new UpdateCommand({
        TableName: this.table,
        Key: deploymentKey(deploymentId),
        UpdateExpression: 'SET #status = :s',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':s': status },
      }),
    );
  }

  requestCancel(deploymentId: string): Promise<DeploymentRecord> {
    // A stopped deployment is cancelled too: its resume winds it down to CANCELLED.
    return this.changeStatus(
      deploymentId,
      ['RUNNING', 'CANCELLING', 'STOPPING', 'STOPPED'],
      'CANCELLING',
      (status) => new SessionNotCancellableError(deploymentId, status),
    );
  }

  requestStop(deploymentId: string): Promise<DeploymentRecord> {
    return this.changeStatus(deploymentId, ['RUNNING', 'STOPPING'], 'STOPPING', (status) => new SessionNotStoppableError(deploymentId, status));
  }

  async reopenStopped(deploymentId: string): Promise<DeploymentRecord> {
    const current = await this.getDeployment(deploymentId);
    if (!current) throw new DeploymentNotFoundError(deploymentId);
    // A person's resume carries it on: a stop not finished is withdrawn, a STOPPED deployment reopens (core/session-control.ts).
    if (!resumeCarriesOn(current.status)) return current;
    return this.changeStatus(deploymentId, RESUME_CARRIES_ON, 'RUNNING', (status) => new SessionNotStoppableError(deploymentId, status));
  }

  /** One conditional write from one of `from` to `to`; `refused` says why when the status was another. */
  private async changeStatus(
    deploymentId: string,
    from: readonly DeploymentStatus[],
    to: DeploymentStatus,
    refused: (status: string) => Error,
  ): Promise<DeploymentRecord> {
    const values = Object.fromEntries(from.map((status, i) => [`:from${i}`, status]));
    const out = await conditionalWrite(
      this.options.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: deploymentKey(deploymentId),
          UpdateExpression: 'SET #status = :to',
          ConditionExpression: `#status IN (${Object.keys(values).join(', ')})`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':to': to, ...values },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (out !== CONDITION_FAILED) return toRecord(out.Attributes ?? {});
    // The failed condition does not say why: read it.
    const current = await this.getDeployment(deploymentId);
    if (!current) throw new DeploymentNotFoundError(deploymentId);
    throw refused(current.status);
  }

  async removeEndedDeployment(deploymentId: string): Promise<DeploymentRecord> {
    const [a, b, c] = ENDED_DEPLOYMENT_STATUSES;
    const out = await conditionalWrite(
      this.options.client.send(
        new DeleteCommand({
          TableName: this.table,
          Key: deploymentKey(deploymentId),
          ConditionExpression: '#status IN (:a, :b, :c)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':a': a, ':b': b, ':c': c },
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    if (out === CONDITION_FAILED) {
      const current = await this.getDeployment(deploymentId);
      if (!current) throw new DeploymentNotFoundError(deploymentId);
      throw new SessionNotCancellableError(deploymentId, `${current.status} (it has not ended: cancel it first)`);
    }
    if (!out.Attributes) throw new DeploymentNotFoundError(deploymentId);
    // The record first (it is what readers look for), then its plan and batch results; a retry finishes the rest.
    const rest = await queryAll(this.options.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': deploymentPk(deploymentId) },
      ProjectionExpression: 'pk, sk',
      ConsistentRead: true,
    });
    await batchWriteAll(
      this.options.client,
      this.table,
      rest.map((key) => ({ DeleteRequest: { Key: { pk: key['pk'], sk: key['sk'] } } })),
    );
    this.plans.delete(deploymentId);
    return toRecord(out.Attributes);
  }

  async putBatchResult(deploymentId: string, result: BatchResult): Promise<void> {
    await this.options.client.send(
      new PutCommand({ TableName: this.table, Item: { ...batchResultKey(deploymentId, result.group, result.phase, result.batch), ...result } }),
    );
  }

  async listBatchResults(deploymentId: string, group: string, phase: DeploymentPhase): Promise<BatchResult[]> {
    const items = await queryAll(this.options.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': deploymentPk(deploymentId), ':prefix': batchResultPrefix(group, phase) },
      ConsistentRead: true,
    });
    return items.map((item) => withoutKeys<BatchResult>(item));
  }
}

function toRecord(item: Record<string, unknown>): DeploymentRecord {
  const { stateGz, planParts: _parts, ...rest } = withoutKeys<StoredRecord>(item);
  return { ...rest, state: unpack<DeploymentRunState>(stateGz) };
}
