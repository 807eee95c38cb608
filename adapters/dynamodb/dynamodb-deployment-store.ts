import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DeploymentNotFoundError, StaleWriteError } from '../../core/errors';
import { RUN_RESUME } from '../../core/run-status';
import type { DeploymentPhase, DeploymentPlan, DeploymentRunState } from '../../core/group-deployment';
import { ENDED_DEPLOYMENT_STATUSES, type BatchResult, type DeploymentRecord, type DeploymentStatus, type DeploymentStore } from '../../ports/deployment-store';
import { conditionalWrite, withoutKeys } from './items';
import { pack, packParts, unpack, unpackParts } from './packed';
import { queryAll } from './query';
import { DynamoDbRunStore, runStatusRecordDesign, type DynamoDbRunStoreOptions } from './run-store';
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
} from './table-design';

/** Plans never change: a warm Lambda container reads each one once. */
const PLAN_CACHE_SIZE = 16;

interface StoredRecord extends Omit<DeploymentRecord, 'state'> {
  stateGz: Uint8Array;
  planParts: number;
}

/** A deployment's record: its status moved by core's rules for runs (core/run-status.ts). */
export const DEPLOYMENT_RECORD = runStatusRecordDesign<DeploymentRecord>({
  key: deploymentKey,
  partition: deploymentPk,
  listedUnder: DEPLOYMENTS_GSI_PARTITION,
  fromItem: toRecord,
  notFound: (deploymentId) => new DeploymentNotFoundError(deploymentId),
  ended: ENDED_DEPLOYMENT_STATUSES,
});

/**
 * DeploymentStore on the rollout table. The run state is one gzipped attribute replaced under a
 * version check (a 10,000-node state packs to tens of KB), so the pure domain reducer stays the one
 * place where stages change; the plan is written once, in gzipped parts.
 */
export class DynamoDbDeploymentStore extends DynamoDbRunStore<DeploymentRecord, DeploymentStatus> implements DeploymentStore {
  private readonly plans = new Map<string, DeploymentPlan>();

  constructor(options: DynamoDbRunStoreOptions) {
    super(options, DEPLOYMENT_RECORD);
  }

  async createDeployment(record: Omit<DeploymentRecord, 'version'>, plan: DeploymentPlan): Promise<void> {
    if (await this.getDeployment(record.deploymentId)) return;
    const parts = packParts(plan);
    for (const [part, data] of parts.entries()) {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: { ...deploymentPlanKey(record.deploymentId, part), data } }));
    }
    const { state, ...rest } = record;
    const item: StoredRecord & Record<string, unknown> = { ...rest, version: 0, stateGz: pack(state), planParts: parts.length };
    await conditionalWrite(
      this.client.send(
        new PutCommand({
          TableName: this.tableName,
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

  getDeployment(deploymentId: string): Promise<DeploymentRecord | undefined> {
    return this.read(deploymentId);
  }

  async getPlan(deploymentId: string): Promise<DeploymentPlan> {
    const cached = this.plans.get(deploymentId);
    if (cached) return cached;
    const items = await queryAll(this.client, {
      TableName: this.tableName,
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
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
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
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: deploymentKey(deploymentId),
        UpdateExpression: 'SET #status = :s',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':s': status },
      }),
    );
  }

  async reopenStopped(deploymentId: string): Promise<DeploymentRecord> {
    // A person's resume carries it on: a stop not finished is withdrawn, a STOPPED deployment reopens; any other is left as it is.
    const out = await this.transition(deploymentId, RUN_RESUME);
    return 'moved' in out ? out.moved : out.refused;
  }

  protected override forgetCached(deploymentId: string): void {
    this.plans.delete(deploymentId);
  }

  async putBatchResult(deploymentId: string, result: BatchResult): Promise<void> {
    await this.client.send(
      new PutCommand({ TableName: this.tableName, Item: { ...batchResultKey(deploymentId, result.group, result.phase, result.batch), ...result } }),
    );
  }

  async listBatchResults(deploymentId: string, group: string, phase: DeploymentPhase): Promise<BatchResult[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
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
