import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Environment, EnvironmentFields, EnvironmentNode, Release, SeedDraft } from '../../core/environments';
import { EnvironmentResourceNotFoundError, ResourceConflictError, StaleWriteError, UpgradeNotAllowedError, type FieldProblem } from '../../core/errors';
import type { EnvironmentStore, NodeOwnership, StoredEnvironment } from '../../ports/environment-store';
import { CONDITION_FAILED, ITEM_ON_FAILURE, conditionalWrite, conditionalWriteOrItem, withoutKeys, withoutUndefined } from './items';
import { queryAll } from './query';
import {
  ENVIRONMENT_NODE_SK_PREFIX,
  ENVIRONMENT_SK_PREFIX,
  ENVIRONMENTS_PK,
  RELEASE_SK_PREFIX,
  environmentKey,
  environmentIdCounterKey,
  environmentNameKey,
  environmentNodeKey,
  releaseKey,
  siteNodeClaimKey,
  upgradeRelationKey,
  type ItemKey,
} from './table-design';

/**
 * How long a claim holds without what it was claimed for being stored (a clone's seed, a registration's
 * environment): far above one registration's few dozen writes. Past it, a crash between the writes no longer
 * blocks anyone: the claim is taken over.
 */
export const SEED_CLAIM_LEASE_MS = 60_000;

/** Rounds of a claim that keeps meeting a changing holder before it gives up (each round a read and a write). */
const CLAIM_ROUNDS = 8;

interface EnvironmentItem {
  environment: EnvironmentFields;
  revision: number;
  /** While an environment is being registered: hidden from readers until the registration that wrote it commits. */
  registration?: { token: string; at: number };
  /** Being deleted: hidden from readers, its claims no longer hold. */
  deleting?: boolean;
}

/** The 1:1 upgrade relation of an original: claimed by a clone, then naming the seed it registers, then its seed. */
interface RelationItem {
  claimToken?: string;
  claimedAt?: number;
  pendingSeedId?: number;
  seedId?: number;
}

/** A clone's claim of its original's upgrade relation: its token, and when it was taken (for the takeover lease). */
interface SeedClaim {
  token: string;
  at: number;
}

/** The refusal of a second upgrade of one original, naming its seed as the relation does (none while it is being created). */
function alreadyUpgraded(originalId: number, relation: RelationItem | undefined): UpgradeNotAllowedError {
  // A relation claimed by a clone whose seed is not stored yet names no seed.
  const seedId = typeof relation?.seedId === 'number' ? relation.seedId : undefined;
  return new UpgradeNotAllowedError(`environment ${originalId} is already being upgraded: its upgrade seed is environment ${seedId ?? '(being created)'}`);
}

interface NameClaim {
  environmentId: number;
}

interface SiteNodeClaim {
  nodeId: number;
  /** The environment that claimed it (a registration in progress holds it through this). */
  environmentId: number;
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

/** What one attempt wrote and must give back if it fails: each a delete on the condition that it is still ours. */
interface Written {
  key: ItemKey;
  condition: string;
  values: Record<string, unknown>;
}

/** A claim held by someone else: the problem to report. */
class Held extends Error {
  constructor(readonly problem: FieldProblem) {
    super(problem.message);
  }
}

/**
 * EnvironmentStore on the rollout table: every release, environment, node ownership, name and site
 * node claim, upgrade relation and the id counter in one partition (a site has tens of environments
 * and hundreds of their nodes, not more), so one Query lists them.
 *
 * Single-item conditional writes only (the local DynamoDB has no transactions). A registration writes
 * its environment first, marked pending (readers skip it), then claims its name, its site nodes and
 * its node ids, each a conditional put, and commits by removing the mark. A claim holds while the
 * environment named in it is committed (and still has that name or node), or is pending within
 * SEED_CLAIM_LEASE_MS; past that, a crash between the writes left it, and the next claimant first
 * voids the stale registration (deletes its pending item, so that it can never commit) then takes the
 * claim over. A registration that meets a live holder gives back everything it wrote.
 */
export class DynamoDbEnvironmentStore implements EnvironmentStore {
  constructor(private readonly options: { tableName: string; client: DynamoDBDocumentClient; now?: () => number }) {}

  /** Wall-clock ms for the claims' lease (a crash is measured in real time, whatever the site's clock). */
  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private get table() {
    return this.options.tableName;
  }

  private get client() {
    return this.options.client;
  }

  async listReleases(): Promise<Release[]> {
    return (await this.queryPrefix(RELEASE_SK_PREFIX)).map((item) => item['release'] as Release);
  }

  async getRelease(id: number): Promise<Release | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: releaseKey(id), ConsistentRead: true }));
    return Item ? (Item['release'] as Release) : undefined;
  }

  async listEnvironments(): Promise<Environment[]> {
    // One Query of the partition: each node item is read once, so each node lands in exactly one environment.
    const items = await queryAll(this.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': ENVIRONMENTS_PK },
      ConsistentRead: true,
    });
    const owned = items.filter((item) => String(item['sk']).startsWith(ENVIRONMENT_NODE_SK_PREFIX)).map((item) => withoutKeys<NodeOwnership>(item));
    return items
      .filter((item) => String(item['sk']).startsWith(ENVIRONMENT_SK_PREFIX))
      .map((item) => withoutKeys<EnvironmentItem>(item))
      .filter(isCommitted)
      .map((item) => withNodes(item.environment, owned));
  }

  async getEnvironment(id: number): Promise<StoredEnvironment | undefined> {
    const item = await this.environmentItem(id);
    if (!item || !isCommitted(item)) return undefined;
    const owned = await queryAll(this.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: 'clusterId = :id',
      ExpressionAttributeValues: { ':pk': ENVIRONMENTS_PK, ':prefix': ENVIRONMENT_NODE_SK_PREFIX, ':id': id },
      ConsistentRead: true,
    });
    return {
      environment: withNodes(
        item.environment,
        owned.map((o) => withoutKeys<NodeOwnership>(o)),
      ),
      revision: item.revision,
    };
  }

  async getNode(nodeId: number): Promise<NodeOwnership | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: environmentNodeKey(nodeId), ConsistentRead: true }));
    return Item ? withoutKeys<NodeOwnership>(Item) : undefined;
  }

  async moveNode(nodeId: number, from: number, to: number): Promise<EnvironmentNode> {
    const { Attributes } = await conditionalWrite(
      this.client.send(
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
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: upgradeRelationKey(originalId), ConsistentRead: true }));
    // A relation claimed by a clone whose seed is not stored yet names no seed.
    return typeof Item?.['seedId'] === 'number' ? Item['seedId'] : undefined;
  }

  async seed(site: { releases: readonly Release[]; environments: readonly Environment[] }): Promise<void> {
    // What the site file declares (checked whole: names and nodes unique) and the store lacks; what is stored is kept.
    for (const release of site.releases) await this.putNew({ ...releaseKey(release.id), release });
    for (const environment of site.environments) {
      await this.putNew({ ...environmentKey(environment.id), environment: fieldsOf(environment), revision: 0 });
      await this.putNew({ ...environmentNameKey(environment.name), environmentId: environment.id } satisfies ItemKey & NameClaim);
      for (const node of environment.nodes) {
        await this.putNew({ ...siteNodeClaimKey(node.name), nodeId: node.id, environmentId: environment.id } satisfies ItemKey & SiteNodeClaim);
        await this.putNew({ ...environmentNodeKey(node.id), node, clusterId: environment.id });
      }
      if (environment.original_cluster_id !== undefined) await this.putNew({ ...upgradeRelationKey(environment.original_cluster_id), seedId: environment.id });
    }
    await this.raiseIdCounter(Math.max(0, ...site.environments.map((env) => env.id)));
  }

  async addRelease(release: Release): Promise<'created' | 'unchanged'> {
    const put = await this.putNew({ ...releaseKey(release.id), release });
    if ('written' in put) return 'created';
    const stored = put.failed?.['release'] as Release | undefined;
    if (sameJson(stored, release)) return 'unchanged';
    throw new ResourceConflictError(`release ${release.id}`, [
      { field: 'id', message: `release ${release.id} is stored with other content (${stored?.name} ${stored?.version})` },
    ]);
  }

  async addEnvironment(environment: Environment): Promise<'created' | 'unchanged'> {
    const id = environment.id;
    const registration = { token: randomUUID(), at: this.now() };
    const written: Written[] = [];
    // 1. The environment, pending: the one item a stale registration is voided by.
    const opened = await this.openRegistration(environment, registration);
    if (opened === 'pending') written.push({ key: environmentKey(id), condition: 'registration.#token = :token', values: { ':token': registration.token } });
    const conflicts: FieldProblem[] = [];
    const claim = async (work: () => Promise<void>) => {
      try {
        await work();
      } catch (err) {
        if (!(err instanceof Held)) throw err;
        conflicts.push(err.problem);
      }
    };
    try {
      // 2. Its name, its site nodes (in name order, so that of registrations racing for several, one gets them all), its node ids.
      await claim(() => this.claimName(environment.name, id, written));
      const nodes = environment.nodes
        .map((node, index) => ({ node, index }))
        .sort((a, b) => (a.node.name < b.node.name ? -1 : a.node.name > b.node.name ? 1 : 0));
      for (const { node, index } of nodes) {
        if (conflicts.length > 0) break;
        await claim(() => this.claimSiteNode(node, index, id, written));
        if (conflicts.length === 0) await claim(() => this.claimNodeId(node, index, environment, written));
      }
      if (conflicts.length === 0 && environment.original_cluster_id !== undefined) await claim(() => this.claimRelation(environment, written));
      if (conflicts.length > 0) throw new ResourceConflictError(`environment ${id}`, conflicts);
      // 3. Commit: from here on the environment is read, and what it claimed holds.
      if (opened === 'pending') await this.commitRegistration(id, registration.token);
    } catch (err) {
      await this.giveBack(written);
      throw err;
    }
    await this.raiseIdCounter(id);
    return opened === 'pending' || written.length > 0 ? 'created' : 'unchanged';
  }

  /**
   * Writes the environment's item, pending. 'stored' when the same environment is committed already (a
   * re-import: what it claims is checked and completed, nothing is given back); ResourceConflictError when
   * another environment has the id, or another registration of it is in progress.
   */
  private async openRegistration(environment: Environment, registration: { token: string; at: number }): Promise<'pending' | 'stored'> {
    const item = { ...environmentKey(environment.id), environment: fieldsOf(environment), revision: 0, registration };
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      const put = await this.putNew(item);
      if ('written' in put) return 'pending';
      const stored = put.failed && withoutKeys<EnvironmentItem>(put.failed);
      if (!stored) continue;
      if (isCommitted(stored)) {
        const { status: _status, ...storedFields } = stored.environment;
        const { status: _given, ...givenFields } = fieldsOf(environment);
        // The status is the upgrade's to change: a re-import of the same environment is not a conflict for it.
        if (sameJson(storedFields, givenFields)) return 'stored';
        throw new ResourceConflictError(`environment ${environment.id}`, [
          { field: 'id', message: `environment ${environment.id} is stored with other fields` },
        ]);
      }
      if (this.isLive(stored)) {
        throw new ResourceConflictError(`environment ${environment.id}`, [
          { field: 'id', message: `environment ${environment.id} is being registered by another request` },
        ]);
      }
      // A registration that never committed (a crash): voided, then this one takes its place.
      await this.voidRegistration(environment.id, stored);
    }
    throw new StaleWriteError(`environment ${environment.id}`, 'a registration that keeps changing');
  }

  private async commitRegistration(id: number, token: string): Promise<void> {
    await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: environmentKey(id),
          UpdateExpression: 'REMOVE registration',
          ConditionExpression: 'registration.#token = :token',
          ExpressionAttributeNames: { '#token': 'token' },
          ExpressionAttributeValues: { ':token': token },
        }),
      ),
      () =>
        // Voided: this registration stalled past the lease and another took what it claimed.
        new ResourceConflictError(`environment ${id}`, [
          { field: 'id', message: `the registration of environment ${id} took too long and was taken over: register it again` },
        ]),
    );
  }

  /** Deletes a registration's pending item, so that it can never commit and its claims no longer hold. */
  private async voidRegistration(id: number, stored: EnvironmentItem): Promise<void> {
    if (!stored.registration) return;
    await conditionalWrite(
      this.client.send(
        new DeleteCommand({
          TableName: this.table,
          Key: environmentKey(id),
          ConditionExpression: 'registration.#token = :token',
          ExpressionAttributeNames: { '#token': 'token' },
          ExpressionAttributeValues: { ':token': stored.registration.token },
        }),
      ),
    );
  }

  /** Whether an environment's claims hold: committed and not being deleted, or pending within the lease. */
  private isLive(item: EnvironmentItem | undefined): boolean {
    if (!item || item.deleting) return false;
    return !item.registration || item.registration.at >= this.now() - SEED_CLAIM_LEASE_MS;
  }

  /** The environment holding a claim, if its claims hold; a stale registration is voided on the way. */
  private async liveHolder(id: number): Promise<EnvironmentItem | undefined> {
    const item = await this.environmentItem(id);
    if (item && this.isLive(item)) return item;
    if (item?.registration) await this.voidRegistration(id, item);
    return undefined;
  }

  /**
   * One claim item: created; or found ours already; or, held by someone whose claim no longer holds,
   * taken over on the condition that it is still as read. Held throws for a live holder.
   */
  private async claimItem(
    key: ItemKey,
    item: Record<string, unknown>,
    written: Written[],
    held: {
      own: (stored: Record<string, unknown>) => boolean | Promise<boolean>;
      /** The problem to report when `stored`'s holder is live; undefined when it is not. */
      liveProblem: (stored: Record<string, unknown>) => Promise<FieldProblem | undefined>;
      /** The condition that `stored` is still as read, for the takeover. */
      unchanged: (stored: Record<string, unknown>) => { condition: string; values: Record<string, unknown> };
      mine: { condition: string; values: Record<string, unknown> };
    },
  ): Promise<void> {
    const full = withoutUndefined({ ...key, ...item });
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      const put = await this.putNew(full);
      if ('written' in put) {
        written.push({ key, condition: held.mine.condition, values: held.mine.values });
        return;
      }
      const Item = put.failed;
      if (!Item) continue;
      if (await held.own(Item)) return;
      const problem = await held.liveProblem(Item);
      if (problem) throw new Held(problem);
      const { condition, values } = held.unchanged(Item);
      const taken = await conditionalWrite(
        this.client.send(new PutCommand({ TableName: this.table, Item: full, ConditionExpression: condition, ExpressionAttributeValues: values })),
      );
      if (taken !== CONDITION_FAILED) {
        written.push({ key, condition: held.mine.condition, values: held.mine.values });
        return;
      }
    }
    throw new StaleWriteError(`${key.sk}`, 'a claim that keeps changing hands');
  }

  /** The name: one environment per name (Nailgun's AlreadyExists). */
  private claimName(name: string, environmentId: number, written: Written[]): Promise<void> {
    return this.claimItem(environmentNameKey(name), { environmentId } satisfies NameClaim, written, {
      own: (stored) => stored['environmentId'] === environmentId,
      liveProblem: async (stored) => {
        const holderId = stored['environmentId'] as number;
        const holder = await this.liveHolder(holderId);
        // A claim left by a rename that did not finish no longer holds: the holder has another name now.
        if (!holder || holder.environment.name !== name) return undefined;
        return { field: 'name', message: `environment ${holderId} is named '${name}' already` };
      },
      unchanged: (stored) => ({ condition: 'environmentId = :held', values: { ':held': stored['environmentId'] } }),
      mine: { condition: 'environmentId = :mine', values: { ':mine': environmentId } },
    });
  }

  /** The site node: it is one environment node (one Fuel id), so it is in one environment. */
  private claimSiteNode(node: EnvironmentNode, index: number, environmentId: number, written: Written[]): Promise<void> {
    return this.claimItem(siteNodeClaimKey(node.name), { nodeId: node.id, environmentId } satisfies SiteNodeClaim, written, {
      own: (stored) => stored['nodeId'] === node.id,
      liveProblem: async (stored) => {
        const claim = stored as unknown as SiteNodeClaim;
        // It holds while its environment node is in a live environment (wherever it moved), or its claimant is still registering.
        const owner = await this.getNode(claim.nodeId);
        const ownerLive = owner !== undefined && owner.node.name === node.name && (await this.liveHolder(owner.clusterId)) !== undefined;
        const claimantRegistering = !ownerLive && (await this.liveHolder(claim.environmentId))?.registration !== undefined;
        if (!ownerLive && !claimantRegistering) return undefined;
        const where = ownerLive ? owner.clusterId : claim.environmentId;
        return { field: `nodes[${index}].name`, message: `'${node.name}' is node ${claim.nodeId} of environment ${where}` };
      },
      unchanged: (stored) => ({ condition: 'nodeId = :node AND environmentId = :env', values: { ':node': stored['nodeId'], ':env': stored['environmentId'] } }),
      mine: { condition: 'nodeId = :node AND environmentId = :env', values: { ':node': node.id, ':env': environmentId } },
    });
  }

  /** The node id: its ownership item, which moves between environments (assign) with one conditional write. */
  private claimNodeId(node: EnvironmentNode, index: number, environment: Environment, written: Written[]): Promise<void> {
    const environmentId = environment.id;
    const otherFields = { field: `nodes[${index}]`, message: `node ${node.id} is stored with other fields` };
    return this.claimItem(environmentNodeKey(node.id), { node, clusterId: environmentId }, written, {
      own: async (stored) => {
        const { clusterId, node: storedNode } = stored as unknown as NodeOwnership;
        // Ours, or assigned to our seed since (it still counts as ours): the same node, or a conflict.
        if (clusterId !== environmentId && (await this.seedOf(environmentId)) !== clusterId) return false;
        if (!sameJson(storedNode, node)) throw new Held(otherFields);
        return true;
      },
      liveProblem: async (stored) => {
        const { clusterId } = stored as unknown as NodeOwnership;
        if (!(await this.liveHolder(clusterId))) return undefined;
        return { field: `nodes[${index}].id`, message: `node ${node.id} belongs to environment ${clusterId}` };
      },
      unchanged: (stored) => ({ condition: 'clusterId = :held', values: { ':held': stored['clusterId'] } }),
      mine: { condition: 'clusterId = :mine', values: { ':mine': environmentId } },
    });
  }

  /** A seed registered with its original (an import): the 1:1 upgrade relation. */
  private async claimRelation(environment: Environment, written: Written[]): Promise<void> {
    const originalId = environment.original_cluster_id!;
    const put = await this.putNew({ ...upgradeRelationKey(originalId), seedId: environment.id });
    if ('written' in put) {
      written.push({ key: upgradeRelationKey(originalId), condition: 'seedId = :mine', values: { ':mine': environment.id } });
      return;
    }
    // A relation claimed by a clone whose seed is not stored yet names no seed.
    const seedId = typeof put.failed?.['seedId'] === 'number' ? put.failed['seedId'] : undefined;
    if (seedId !== environment.id) {
      throw new Held({ field: 'original_cluster_id', message: `environment ${originalId} already has upgrade seed ${seedId ?? '(being created)'}` });
    }
  }

  /** Gives back what a failed attempt wrote, newest first, each only while it is still ours. */
  private async giveBack(written: readonly Written[]): Promise<void> {
    for (const { key, condition, values } of [...written].reverse()) {
      await conditionalWrite(
        this.client.send(
          new DeleteCommand({
            TableName: this.table,
            Key: key,
            ConditionExpression: condition,
            ...(condition.includes('#token') ? { ExpressionAttributeNames: { '#token': 'token' } } : {}),
            ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
          }),
        ),
      );
    }
  }

  /** A put of an item that must not exist yet: written, or the item that was there (from the failed write itself, no read). */
  private putNew(item: Record<string, unknown>) {
    return conditionalWriteOrItem(
      this.client.send(
        new PutCommand({ TableName: this.table, Item: withoutUndefined(item), ConditionExpression: 'attribute_not_exists(pk)', ...ITEM_ON_FAILURE }),
      ),
    );
  }

  private async environmentItem(id: number): Promise<EnvironmentItem | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: environmentKey(id), ConsistentRead: true }));
    return Item ? withoutKeys<EnvironmentItem>(Item) : undefined;
  }

  /** New seeds take ids above every registered environment. */
  private async raiseIdCounter(highest: number): Promise<void> {
    await conditionalWrite(
      this.client.send(
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
    const originalId = draft.original_cluster_id;
    const claim: SeedClaim = { token: randomUUID(), at: this.now() };
    await this.completeCrashedClone(originalId);
    await this.claimUpgradeRelation(originalId, claim);
    const environment = await this.registerSeed(draft, claim);
    // A crash before this is completed by the next clone of the original (completeCrashedClone).
    await this.relationWrite(originalId, claim, 'SET seedId = :seed', environment.id);
    return environment;
  }

  /** A clone that died after its seed was stored but before the relation named it: completed, not cloned again (UpgradeNotAllowedError). */
  private async completeCrashedClone(originalId: number): Promise<void> {
    const relation = upgradeRelationKey(originalId);
    const before = (await this.client.send(new GetCommand({ TableName: this.table, Key: relation, ConsistentRead: true }))).Item as RelationItem | undefined;
    if (!before || before.seedId !== undefined || before.pendingSeedId === undefined) return;
    if (!isCommittedItem(await this.environmentItem(before.pendingSeedId))) return;
    const out = await conditionalWriteOrItem(
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: relation,
          UpdateExpression: 'SET seedId = :seed',
          ConditionExpression: 'claimToken = :token',
          ExpressionAttributeValues: { ':seed': before.pendingSeedId, ':token': before.claimToken },
          ReturnValues: 'ALL_NEW',
          // Another clone's claim in between: the relation as it saw it names the seed, if any.
          ...ITEM_ON_FAILURE,
        }),
      ),
    );
    throw alreadyUpgraded(originalId, ('written' in out ? out.written.Attributes : out.failed) as RelationItem | undefined);
  }

  /**
   * The relation item is the 1:1 guard: its conditional put is the one place two clones of one original race. It is
   * claimed before an id is drawn (a losing clone burns none); a claim whose seed never came (a crash between the
   * writes) is taken over once it is older than the lease, so no original is locked for good.
   */
  private async claimUpgradeRelation(originalId: number, claim: SeedClaim): Promise<void> {
    const claimed = await conditionalWriteOrItem(
      this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...upgradeRelationKey(originalId), claimToken: claim.token, claimedAt: claim.at },
          ConditionExpression: 'attribute_not_exists(pk) OR (attribute_not_exists(seedId) AND claimedAt < :stale)',
          ExpressionAttributeValues: { ':stale': claim.at - SEED_CLAIM_LEASE_MS },
          ReturnValues: 'ALL_OLD',
          // The relation that refused the claim names the seed: no read after it.
          ...ITEM_ON_FAILURE,
        }),
      ),
    );
    if ('failed' in claimed) throw alreadyUpgraded(originalId, claimed.failed as RelationItem | undefined);
    // Taken over: the seed the dead clone was registering can never commit now.
    const dead = (claimed.written.Attributes as RelationItem | undefined)?.pendingSeedId;
    if (dead !== undefined) {
      const item = await this.environmentItem(dead);
      if (item) await this.voidRegistration(dead, item);
    }
  }

  /**
   * Draws the seed's id, names it on the claimed relation, and registers it as any environment is: pending,
   * its name claimed (clones of two originals may race for one name), committed. A failure gives back the
   * claims (the relation's too), so that the clone can be asked again.
   */
  private async registerSeed(draft: SeedDraft, claim: SeedClaim): Promise<Environment> {
    const written: Written[] = [{ key: upgradeRelationKey(draft.original_cluster_id), condition: 'claimToken = :token', values: { ':token': claim.token } }];
    try {
      const environment: Environment = { ...draft, id: await this.nextEnvironmentId() };
      await this.relationWrite(draft.original_cluster_id, claim, 'SET pendingSeedId = :seed', environment.id);
      const registration = { token: claim.token, at: claim.at };
      await this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: withoutUndefined({ ...environmentKey(environment.id), environment: fieldsOf(environment), revision: 0, registration }),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      written.push({ key: environmentKey(environment.id), condition: 'registration.#token = :token', values: { ':token': claim.token } });
      try {
        await this.claimName(environment.name, environment.id, written);
      } catch (err) {
        if (!(err instanceof Held)) throw err;
        throw new ResourceConflictError(`upgrade seed '${environment.name}'`, [err.problem]);
      }
      await this.commitRegistration(environment.id, claim.token);
      return environment;
    } catch (err) {
      await this.giveBack(written);
      throw err;
    }
  }

  /** Sets the seed id on the relation this clone claimed (`update` names it `:seed`), while the claim is still its own. */
  private async relationWrite(originalId: number, claim: SeedClaim, update: string, seedId: number): Promise<void> {
    await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: upgradeRelationKey(originalId),
          UpdateExpression: update,
          ConditionExpression: 'claimToken = :token',
          ExpressionAttributeValues: { ':seed': seedId, ':token': claim.token },
        }),
      ),
      (cause) => new StaleWriteError(`upgrade relation of environment ${originalId}`, `claim ${claim.token}`, { cause }),
    );
  }

  async replaceEnvironment(environment: EnvironmentFields | Environment, revision: number): Promise<void> {
    const stored = await this.environmentItem(environment.id);
    const renamed = stored !== undefined && stored.environment.name !== environment.name;
    const written: Written[] = [];
    if (renamed) {
      // The new name first (conditional, as at registration); the old one is given back once the rename is stored.
      try {
        await this.claimName(environment.name, environment.id, written);
      } catch (err) {
        if (!(err instanceof Held)) throw err;
        throw new ResourceConflictError(`environment ${environment.id}`, [err.problem]);
      }
    }
    try {
      await conditionalWrite(
        this.client.send(
          new PutCommand({
            TableName: this.table,
            Item: withoutUndefined({ ...environmentKey(environment.id), environment: fieldsOf(environment), revision: revision + 1 }),
            ConditionExpression: 'revision = :revision AND attribute_not_exists(registration) AND attribute_not_exists(deleting)',
            ExpressionAttributeValues: { ':revision': revision },
          }),
        ),
        (cause) => new StaleWriteError(`environment ${environment.id}`, `revision ${revision}`, { cause }),
      );
    } catch (err) {
      await this.giveBack(written);
      throw err;
    }
    // A crash before this leaves the old name's claim naming an environment of another name: it no longer holds.
    if (renamed)
      await this.giveBack([{ key: environmentNameKey(stored.environment.name), condition: 'environmentId = :mine', values: { ':mine': environment.id } }]);
  }

  async deleteEnvironment(id: number): Promise<void> {
    const stored = await this.environmentItem(id);
    // A pending registration is not an environment yet; one marked deleting is finished here.
    if (!stored || stored.registration) throw new EnvironmentResourceNotFoundError('environment', id);
    // 1. Marked: from here its claims no longer hold and readers do not see it; a crash after this is finished by a DELETE again.
    if (!stored.deleting) {
      await conditionalWrite(
        this.client.send(
          new UpdateCommand({
            TableName: this.table,
            Key: environmentKey(id),
            UpdateExpression: 'SET deleting = :true',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(registration)',
            ExpressionAttributeValues: { ':true': true },
          }),
        ),
        () => new EnvironmentResourceNotFoundError('environment', id),
      );
    }
    // 2. Its nodes (each site node claim, then the ownership), its name, its upgrade relations; 3. the environment.
    const owned = await queryAll(this.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: 'clusterId = :id',
      ExpressionAttributeValues: { ':pk': ENVIRONMENTS_PK, ':prefix': ENVIRONMENT_NODE_SK_PREFIX, ':id': id },
      ConsistentRead: true,
    });
    const release: Written[] = [];
    for (const { node } of owned.map((item) => withoutKeys<NodeOwnership>(item))) {
      release.push({ key: siteNodeClaimKey(node.name), condition: 'nodeId = :node', values: { ':node': node.id } });
      release.push({ key: environmentNodeKey(node.id), condition: 'clusterId = :mine', values: { ':mine': id } });
    }
    release.push({ key: environmentNameKey(stored.environment.name), condition: 'environmentId = :mine', values: { ':mine': id } });
    // An original's relation (its seed stays, as an environment of its own), and a seed's (its original can be cloned again).
    release.push({ key: upgradeRelationKey(id), condition: 'attribute_exists(pk)', values: {} });
    if (stored.environment.original_cluster_id !== undefined) {
      release.push({ key: upgradeRelationKey(stored.environment.original_cluster_id), condition: 'seedId = :mine', values: { ':mine': id } });
    }
    release.push({ key: environmentKey(id), condition: 'deleting = :true', values: { ':true': true } });
    // giveBack deletes newest first: reverse, so that the environment item goes last.
    await this.giveBack([...release].reverse());
  }

  private async nextEnvironmentId(): Promise<number> {
    const { Attributes } = await this.client.send(
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
    return queryAll(this.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': ENVIRONMENTS_PK, ':prefix': prefix },
      ConsistentRead: true,
    });
  }
}

/** An environment readers see: its registration committed, not being deleted. */
function isCommitted(item: EnvironmentItem): boolean {
  return item.registration === undefined && item.deleting !== true;
}

const isCommittedItem = (item: EnvironmentItem | undefined): boolean => item !== undefined && isCommitted(item);

/** Deep equality of two stored records, as DynamoDB keeps them (undefined fields dropped, key order irrelevant). */
function sameJson(a: unknown, b: unknown): boolean {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .filter(([, v]) => v !== undefined)
              .sort(([x], [y]) => (x < y ? -1 : 1))
              .map(([k, v]) => [k, canonical(v)]),
          )
        : value;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}
