import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Environment, EnvironmentFields, EnvironmentNode, Release, SeedDraft } from '../../core/environments';
import { ResourceConflictError, StaleWriteError, UpgradeNotAllowedError, type FieldProblem } from '../../core/errors';
import type { EnvironmentStore, NodeOwnership, StoredEnvironment } from '../../ports/environment-store';
import { CONDITION_FAILED, conditionalWrite, withoutKeys, withoutUndefined } from './items';
import { queryAll } from './query';
import {
  ENVIRONMENT_NODE_SK_PREFIX,
  ENVIRONMENT_SK_PREFIX,
  ENVIRONMENTS_PK,
  RELEASE_SK_PREFIX,
  environmentKey,
  environmentIdCounterKey,
  environmentNodeKey,
  releaseKey,
  upgradeRelationKey,
} from './table-design';

/** How long a clone's claim on an original holds without its seed being stored: far above one clone's few writes. */
export const SEED_CLAIM_LEASE_MS = 60_000;

interface EnvironmentItem {
  environment: EnvironmentFields;
  revision: number;
}

/** An environment's own fields as stored: never a node list (an item of an older layout may still carry one). */
function fieldsOf(environment: EnvironmentFields | Environment): EnvironmentFields {
  const { nodes: _nodes, ...fields } = environment as Partial<Environment> & EnvironmentFields;
  return fields;
}

const withNodes = (environment: EnvironmentFields, owned: readonly NodeOwnership[]): Environment => ({
  ...fieldsOf(environment),
  nodes: owned.filter((o) => o.clusterId === environment.id).map((o) => o.node),
});

/**
 * EnvironmentStore on the rollout table: every release, environment, node ownership, upgrade
 * relation and the id counter in one partition (a site has tens of environments and hundreds of
 * their nodes, not more), so one Query lists them.
 */
export class DynamoDbEnvironmentStore implements EnvironmentStore {
  constructor(private readonly options: { tableName: string; client: DynamoDBDocumentClient; now?: () => number }) {}

  /** Wall-clock ms for the clone claim's lease (a crash is measured in real time, whatever the site's clock). */
  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private get table() {
    return this.options.tableName;
  }

  async listReleases(): Promise<Release[]> {
    return (await this.queryPrefix(RELEASE_SK_PREFIX)).map((item) => item['release'] as Release);
  }

  async getRelease(id: number): Promise<Release | undefined> {
    const { Item } = await this.options.client.send(new GetCommand({ TableName: this.table, Key: releaseKey(id), ConsistentRead: true }));
    return Item ? (Item['release'] as Release) : undefined;
  }

  async listEnvironments(): Promise<Environment[]> {
    // One Query of the partition: each node item is read once, so each node lands in exactly one environment.
    const items = await queryAll(this.options.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': ENVIRONMENTS_PK },
      ConsistentRead: true,
    });
    const owned = items.filter((item) => String(item['sk']).startsWith(ENVIRONMENT_NODE_SK_PREFIX)).map((item) => withoutKeys<NodeOwnership>(item));
    return items
      .filter((item) => String(item['sk']).startsWith(ENVIRONMENT_SK_PREFIX))
      .map((item) => withNodes(withoutKeys<EnvironmentItem>(item).environment, owned));
  }

  async getEnvironment(id: number): Promise<StoredEnvironment | undefined> {
    const { Item } = await this.options.client.send(new GetCommand({ TableName: this.table, Key: environmentKey(id), ConsistentRead: true }));
    if (!Item) return undefined;
    const { environment, revision } = withoutKeys<EnvironmentItem>(Item);
    const owned = await queryAll(this.options.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: 'clusterId = :id',
      ExpressionAttributeValues: { ':pk': ENVIRONMENTS_PK, ':prefix': ENVIRONMENT_NODE_SK_PREFIX, ':id': id },
      ConsistentRead: true,
    });
    return { environment: withNodes(environment, owned.map((item) => withoutKeys<NodeOwnership>(item))), revision };
  }

  async getNode(nodeId: number): Promise<NodeOwnership | undefined> {
    const { Item } = await this.options.client.send(new GetCommand({ TableName: this.table, Key: environmentNodeKey(nodeId), ConsistentRead: true }));
    return Item ? withoutKeys<NodeOwnership>(Item) : undefined;
  }

  async moveNode(nodeId: number, from: number, to: number): Promise<EnvironmentNode> {
    const { Attributes } = await conditionalWrite(
      this.options.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: environmentNodeKey(nodeId),
          UpdateExpression: 'SET clusterId = :to',
          ConditionExpression: 'clusterId = :from',
          ExpressionAttributeValues: { ':from': from, ':to': to },
          ReturnValues: 'ALL_NEW',
        }),
      ),
      (cause) => new StaleWriteError(`node ${nodeId}`, `environment ${from}`, { cause }),
    );
    return (Attributes as NodeOwnership).node;
  }

  async seedOf(originalId: number): Promise<number | undefined> {
    const { Item } = await this.options.client.send(new GetCommand({ TableName: this.table, Key: upgradeRelationKey(originalId), ConsistentRead: true }));
    // A relation claimed by a clone whose seed is not stored yet names no seed.
    return typeof Item?.['seedId'] === 'number' ? Item['seedId'] : undefined;
  }

  async seed(site: { releases: readonly Release[]; environments: readonly Environment[] }): Promise<void> {
    for (const release of site.releases) await this.putNew({ ...releaseKey(release.id), release });
    for (const environment of site.environments) {
      await this.putNew({ ...environmentKey(environment.id), environment: fieldsOf(environment), revision: 0 });
      for (const node of environment.nodes) await this.putNew({ ...environmentNodeKey(node.id), node, clusterId: environment.id });
      if (environment.original_cluster_id !== undefined) await this.putNew({ ...upgradeRelationKey(environment.original_cluster_id), seedId: environment.id });
    }
    await this.raiseIdCounter(Math.max(0, ...site.environments.map((env) => env.id)));
  }

  async addRelease(release: Release): Promise<'created' | 'unchanged'> {
    if ((await this.putNew({ ...releaseKey(release.id), release })) !== CONDITION_FAILED) return 'created';
    const stored = await this.getRelease(release.id);
    if (sameJson(stored, release)) return 'unchanged';
    throw new ResourceConflictError(`release ${release.id}`, [{ field: 'id', message: `release ${release.id} is stored with other content (${stored?.name} ${stored?.version})` }]);
  }

  async addEnvironment(environment: Environment): Promise<'created' | 'unchanged'> {
    const conflicts: FieldProblem[] = [];
    let created = false;
    if ((await this.putNew({ ...environmentKey(environment.id), environment: fieldsOf(environment), revision: 0 })) !== CONDITION_FAILED) created = true;
    else {
      const stored = await this.getEnvironment(environment.id);
      const { status: _status, ...storedFields } = fieldsOf(stored!.environment);
      const { status: _given, ...givenFields } = fieldsOf(environment);
      // The status is the upgrade's to change: a re-import of the same environment is not a conflict for it.
      if (!sameJson(storedFields, givenFields)) conflicts.push({ field: 'id', message: `environment ${environment.id} is stored with other fields` });
    }
    for (const [i, node] of environment.nodes.entries()) {
      if ((await this.putNew({ ...environmentNodeKey(node.id), node, clusterId: environment.id })) !== CONDITION_FAILED) {
        created = true;
        continue;
      }
      const held = await this.getNode(node.id);
      if (held?.clusterId !== environment.id && held?.clusterId !== undefined && !(await this.isSeedOf(held.clusterId, environment.id))) {
        conflicts.push({ field: `nodes[${i}].id`, message: `node ${node.id} belongs to environment ${held.clusterId}` });
      } else if (!sameJson(held?.node, node)) conflicts.push({ field: `nodes[${i}]`, message: `node ${node.id} is stored with other fields` });
    }
    if (environment.original_cluster_id !== undefined) {
      if ((await this.putNew({ ...upgradeRelationKey(environment.original_cluster_id), seedId: environment.id })) !== CONDITION_FAILED) created = true;
      else if ((await this.seedOf(environment.original_cluster_id)) !== environment.id) {
        conflicts.push({ field: 'original_cluster_id', message: `environment ${environment.original_cluster_id} already has upgrade seed ${await this.seedOf(environment.original_cluster_id)}` });
      }
    }
    await this.raiseIdCounter(environment.id);
    if (conflicts.length > 0) throw new ResourceConflictError(`environment ${environment.id}`, conflicts);
    return created ? 'created' : 'unchanged';
  }

  /** Whether `seedId` is the upgrade seed of `originalId`: a node assigned to the seed since still counts as the original's. */
  private async isSeedOf(seedId: number, originalId: number): Promise<boolean> {
    return (await this.seedOf(originalId)) === seedId;
  }

  private putNew(item: Record<string, unknown>) {
    return conditionalWrite(this.options.client.send(new PutCommand({ TableName: this.table, Item: withoutUndefined(item), ConditionExpression: 'attribute_not_exists(pk)' })));
  }

  /** New seeds take ids above every registered environment. */
  private async raiseIdCounter(highest: number): Promise<void> {
    await conditionalWrite(
      this.options.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: environmentIdCounterKey(),
          UpdateExpression: 'SET #last = :highest',
          ConditionExpression: 'attribute_not_exists(#last) OR #last < :highest',
          ExpressionAttributeNames: { '#last': 'lastId' },
          ExpressionAttributeValues: { ':highest': highest },
        }),
      ),
    );
  }

  async createSeed(draft: SeedDraft): Promise<Environment> {
    const { client } = this.options;
    const originalId = draft.original_cluster_id;
    const claim = { token: randomUUID(), at: this.now() };
    // The relation item is the 1:1 guard: its conditional put is the one place two clones can race. It is
    // claimed before an id is drawn (a losing clone burns none); a claim whose seed never came (a crash
    // between the writes) is taken over once it is older than the lease, so no original is locked for good.
    const claimed = await conditionalWrite(
      client.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...upgradeRelationKey(originalId), claimToken: claim.token, claimedAt: claim.at },
          ConditionExpression: 'attribute_not_exists(pk) OR (attribute_not_exists(seedId) AND claimedAt < :stale)',
          ExpressionAttributeValues: { ':stale': claim.at - SEED_CLAIM_LEASE_MS },
        }),
      ),
    );
    if (claimed === CONDITION_FAILED) {
      const seedId = await this.seedOf(originalId);
      throw new UpgradeNotAllowedError(`environment ${originalId} is already being upgraded: its upgrade seed is environment ${seedId ?? '(being created)'}`);
    }
    const release = () =>
      conditionalWrite(
        client.send(new DeleteCommand({ TableName: this.table, Key: upgradeRelationKey(originalId), ConditionExpression: 'claimToken = :token', ExpressionAttributeValues: { ':token': claim.token } })),
      );
    let environment: Environment;
    try {
      environment = { ...draft, id: await this.nextEnvironmentId() };
      await client.send(
        new PutCommand({
          TableName: this.table,
          Item: withoutUndefined({ ...environmentKey(environment.id), environment: fieldsOf(environment), revision: 0 }),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (err) {
      // Release the claim so that the clone can be asked again.
      await release();
      throw err;
    }
    await conditionalWrite(
      client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: upgradeRelationKey(originalId),
          UpdateExpression: 'SET seedId = :id',
          ConditionExpression: 'claimToken = :token',
          ExpressionAttributeValues: { ':id': environment.id, ':token': claim.token },
        }),
      ),
      (cause) => new StaleWriteError(`upgrade relation of environment ${originalId}`, `claim ${claim.token}`, { cause }),
    );
    return environment;
  }

  async replaceEnvironment(environment: EnvironmentFields | Environment, revision: number): Promise<void> {
    await conditionalWrite(
      this.options.client.send(
        new PutCommand({
          TableName: this.table,
          Item: withoutUndefined({ ...environmentKey(environment.id), environment: fieldsOf(environment), revision: revision + 1 }),
          ConditionExpression: 'revision = :revision',
          ExpressionAttributeValues: { ':revision': revision },
        }),
      ),
      (cause) => new StaleWriteError(`environment ${environment.id}`, `revision ${revision}`, { cause }),
    );
  }

  private async nextEnvironmentId(): Promise<number> {
    const { Attributes } = await this.options.client.send(
      new UpdateCommand({
        TableName: this.table,
        Key: environmentIdCounterKey(),
        UpdateExpression: 'ADD #last :one',
        ExpressionAttributeNames: { '#last': 'lastId' },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Attributes!['lastId'] as number;
  }

  private queryPrefix(prefix: string): Promise<Record<string, unknown>[]> {
    return queryAll(this.options.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': ENVIRONMENTS_PK, ':prefix': prefix },
      ConsistentRead: true,
    });
  }
}

/** Deep equality of two stored records, as DynamoDB keeps them (undefined fields dropped, key order irrelevant). */
function sameJson(a: unknown, b: unknown): boolean {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, v]) => [k, canonical(v)]))
        : value;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}
