import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../../core/clock';
import { systemClock } from '../../core/clock';
import { SessionNotCancellableError, SessionNotFoundError, SessionNotStoppableError, StaleWriteError } from '../../core/errors';
import { stepCount } from '../../core/rolling-upgrade/step-plan';
import {
  ENDED_SESSION_STATES,
  SESSION_CANCEL,
  SESSION_STOP,
  SESSION_STOP_WITHDRAWN,
  isSessionCancellable,
  type NodeRecord,
  type Progress,
  type SessionState,
  type UpgradeSession,
} from '../../core/rolling-upgrade/session';
import type { NodeLock, SessionStore } from '../../ports/session-store';
import type { OperatorWait } from '../../core/rolling-upgrade/operator-gate';
import { batchGetAll, batchWriteAll } from './batch';
import { CONDITION_FAILED, conditionalWrite, withoutKeys, withoutUndefined } from './items';
import { DynamoDbMessageLog } from './message-log';
import { DynamoDbNodeLocks } from './node-locks';

export { DEFAULT_LOCK_LEASE_SECONDS } from './node-locks';
import { planChunkWrites, readPlanSlice, surplusPlanChunkDeletes } from './plan-chunks';
import { queryAll } from './query';
import { NODE_SK_PREFIX, SESSIONS_BY_CREATION_INDEX, SESSIONS_GSI_PARTITION, nodeKey, sessionGsi1Sk, sessionKey, sessionPk } from './table-design';

export interface DynamoDbSessionStoreOptions {
  tableName: string;
  /** Injected, never built from the environment here: the Lambda, the CLI and the tests each bring their own. */
  client: DynamoDBDocumentClient;
  /** Time of message and lock timestamps; the embedded engine passes its simulated clock. Default: system time. */
  clock?: Clock;
  /** Lease of a node lock when the caller names none. Default DEFAULT_LOCK_LEASE_SECONDS. */
  lockLeaseSeconds?: number;
}

/** A condition that the item's `#state` is one of `states` (the rules of which are core's: session.ts), and its values. */
const stateIn = {
  expression: (states: readonly SessionState[]) => `#state IN (${states.map((_, i) => `:state${i}`).join(', ')})`,
  values: (states: readonly SessionState[]) => Object.fromEntries(states.map((state, i) => [`:state${i}`, state])),
};

/** A requestCancel that keeps losing a race to state changes gives up after this many rounds. */
const MAX_CANCEL_ATTEMPTS = 3;

/** SessionStore on the single-table design of table-design.ts; see that file for the item layout. */
export class DynamoDbSessionStore implements SessionStore {
  private readonly tableName: string;
  private readonly client: DynamoDBDocumentClient;
  private readonly clock: Clock;
  /** The node locks every workflow of this table shares. */
  readonly locks: DynamoDbNodeLocks;
  private readonly messages: DynamoDbMessageLog;

  constructor(options: DynamoDbSessionStoreOptions) {
    this.tableName = options.tableName;
    this.client = options.client;
    this.clock = options.clock ?? systemClock;
    this.locks = new DynamoDbNodeLocks({
      client: this.client,
      tableName: this.tableName,
      clock: this.clock,
      ...(options.lockLeaseSeconds ? { lockLeaseSeconds: options.lockLeaseSeconds } : {}),
    });
    this.messages = new DynamoDbMessageLog({ client: this.client, tableName: this.tableName, clock: this.clock, partitionOf: sessionPk });
  }

  async createSession(session: UpgradeSession, plan: readonly string[]): Promise<void> {
    // A repeated create must not rewrite the plan snapshot of a session that may already be running.
    if (await this.getSession(session.upgradeId)) return;
    // Plan first, session last: a session that exists always has its whole plan (no transactions to tie them).
    await batchWriteAll(this.client, this.tableName, planChunkWrites(session.upgradeId, plan));
    // A concurrent create of the same id won: idempotent, nothing to do.
    await conditionalWrite(
      this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...withoutUndefined(session),
            ...sessionKey(session.upgradeId),
            gsi1pk: SESSIONS_GSI_PARTITION,
            gsi1sk: sessionGsi1Sk(session.createdAt, session.upgradeId),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  async savePlan(upgradeId: string, plan: readonly string[], wlmNames?: readonly string[]): Promise<void> {
    const session = await this.getSession(upgradeId);
    if (!session) throw new SessionNotFoundError(upgradeId);
    // Chunks first, counts last: readers trust nodeCount, so they never see a half-written plan.
    await batchWriteAll(this.client, this.tableName, [
      ...planChunkWrites(upgradeId, plan, wlmNames),
      // A retry that snapshots a shorter plan must not leave the earlier snapshot's tail behind.
      ...surplusPlanChunkDeletes(upgradeId, session.nodeCount, plan.length),
    ]);
    await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: 'SET #planTaken = :true, #nodeCount = :nodeCount, #stepCount = :stepCount',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#planTaken': 'planTaken', '#nodeCount': 'nodeCount', '#stepCount': 'stepCount' },
          ExpressionAttributeValues: { ':true': true, ':nodeCount': plan.length, ':stepCount': stepCount(plan.length, session.upgradeStepSize) },
        }),
      ),
      () => new SessionNotFoundError(upgradeId),
    );
  }

  async getSession(upgradeId: string): Promise<UpgradeSession | undefined> {
    const out = await this.client.send(new GetCommand({ TableName: this.tableName, Key: sessionKey(upgradeId), ConsistentRead: true }));
    return out.Item ? withoutKeys<UpgradeSession>(out.Item) : undefined;
  }

  async listSessions(): Promise<UpgradeSession[]> {
    // GSIs cannot be read consistently (AWS rejects ConsistentRead here): a session created a moment ago may be missing.
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      IndexName: SESSIONS_BY_CREATION_INDEX,
      KeyConditionExpression: 'gsi1pk = :sessions',
      ExpressionAttributeValues: { ':sessions': SESSIONS_GSI_PARTITION },
      ScanIndexForward: false,
    });
    return items.map((item) => withoutKeys<UpgradeSession>(item));
  }

  async saveProgress(upgradeId: string, expected: Pick<Progress, 'step' | 'stage'>, progress: Progress): Promise<void> {
    await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: 'SET #progress = :progress',
          ConditionExpression: '#progress.#step = :step AND #progress.#stage = :stage',
          ExpressionAttributeNames: { '#progress': 'progress', '#step': 'step', '#stage': 'stage' },
          ExpressionAttributeValues: { ':progress': withoutUndefined(progress), ':step': expected.step, ':stage': expected.stage },
        }),
      ),
      (cause) => new StaleWriteError(`session ${upgradeId} progress`, `step ${expected.step} stage ${expected.stage}`, { cause }),
    );
  }

  async setState(upgradeId: string, state: SessionState, completed: boolean): Promise<void> {
    await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: 'SET #state = :state, #completed = :completed',
          // Without it an Update would create a headless item for an unknown id.
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#state': 'state', '#completed': 'completed' },
          ExpressionAttributeValues: { ':state': state, ':completed': completed },
        }),
      ),
      () => new SessionNotFoundError(upgradeId),
    );
  }

  async requestCancel(upgradeId: string): Promise<UpgradeSession> {
    for (let attempt = 0; attempt < MAX_CANCEL_ATTEMPTS; attempt++) {
      const moved = await this.transition(upgradeId, SESSION_CANCEL);
      if (moved !== CONDITION_FAILED) return moved;
      // The failed condition does not say why: read it.
      const current = await this.getSession(upgradeId);
      if (!current) throw new SessionNotFoundError(upgradeId);
      if (!isSessionCancellable(current.state)) throw new SessionNotCancellableError(upgradeId, current.state);
      // Back to UPDATING in between: try again.
    }
    throw new SessionNotCancellableError(upgradeId, 'changing state');
  }

  async requestStop(upgradeId: string): Promise<UpgradeSession> {
    const moved = await this.transition(upgradeId, SESSION_STOP);
    if (moved !== CONDITION_FAILED) return moved;
    const current = await this.getSession(upgradeId);
    if (!current) throw new SessionNotFoundError(upgradeId);
    throw new SessionNotStoppableError(upgradeId, current.state);
  }

  /** Moves the session's state by one of core's transitions, in one conditional write: the session after it, or CONDITION_FAILED when its state is not one the transition starts from. */
  private async transition(upgradeId: string, rule: { from: readonly SessionState[]; to: SessionState }): Promise<UpgradeSession | typeof CONDITION_FAILED> {
    const out = await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: 'SET #state = :to',
          ConditionExpression: stateIn.expression(rule.from),
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':to': rule.to, ...stateIn.values(rule.from) },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return out === CONDITION_FAILED ? out : withoutKeys<UpgradeSession>(out.Attributes ?? {});
  }

  async reopenStopped(upgradeId: string, progress: Progress): Promise<UpgradeSession> {
    // A stop nothing finished (STOPPING) is withdrawn: UPDATING again, its progress as it is (or, stopped in between, reopened below).
    await this.transition(upgradeId, SESSION_STOP_WITHDRAWN);
    const stopped = 'STOPPED' satisfies SessionState;
    // Either the stopped session (state and stage), or one cancelled while stopped (the stage alone).
    const out = await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: 'SET #progress = :progress, #state = :updating',
          ConditionExpression: '#state = :stopped AND #progress.#stage = :stopped',
          ExpressionAttributeNames: { '#progress': 'progress', '#stage': 'stage', '#state': 'state' },
          ExpressionAttributeValues: { ':progress': withoutUndefined(progress), ':updating': 'UPDATING' satisfies SessionState, ':stopped': stopped },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (out !== CONDITION_FAILED) return withoutKeys<UpgradeSession>(out.Attributes ?? {});
    const current = await this.getSession(upgradeId);
    if (!current) throw new SessionNotFoundError(upgradeId);
    if (current.progress.stage === 'STOPPED') {
      await this.saveProgress(upgradeId, current.progress, progress);
      return { ...current, progress };
    }
    return current;
  }

  async noteGeneration(upgradeId: string, generation: number): Promise<void> {
    await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: 'SET #generation = :g',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#generation) OR #generation < :g)',
          ExpressionAttributeNames: { '#generation': 'generation' },
          ExpressionAttributeValues: { ':g': generation },
        }),
      ),
    );
  }

  async setOperatorGate(upgradeId: string, change: { paused?: boolean; approveWave?: number }): Promise<UpgradeSession> {
    await this.ensureOperatorMap(upgradeId);
    const sets: string[] = [];
    const names: Record<string, string> = { '#operator': 'operator' };
    const values: Record<string, unknown> = {};
    if (change.paused !== undefined) {
      sets.push('#operator.#paused = :paused');
      names['#paused'] = 'paused';
      values[':paused'] = change.paused;
    }
    if (change.approveWave !== undefined) {
      sets.push('#operator.#approved = list_append(if_not_exists(#operator.#approved, :none), :wave)');
      names['#approved'] = 'approvedWaves';
      values[':none'] = [];
      values[':wave'] = [change.approveWave];
    }
    if (sets.length > 0) {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
    }
    return (await this.getSession(upgradeId))!;
  }

  async removeEndedSession(upgradeId: string): Promise<UpgradeSession> {
    const out = await conditionalWrite(
      this.client.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          ConditionExpression: stateIn.expression(ENDED_SESSION_STATES),
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: stateIn.values(ENDED_SESSION_STATES),
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    if (out === CONDITION_FAILED) {
      const current = await this.getSession(upgradeId);
      if (!current) throw new SessionNotFoundError(upgradeId);
      throw new SessionNotCancellableError(upgradeId, `${current.state} (it has not ended: cancel it first)`);
    }
    if (!out.Attributes) throw new SessionNotFoundError(upgradeId);
    // The session item first (it is what readers look for), then the rest of its partition; a retry finishes the rest.
    const rest = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': sessionPk(upgradeId) },
      ProjectionExpression: 'pk, sk',
      ConsistentRead: true,
    });
    await batchWriteAll(
      this.client,
      this.tableName,
      rest.map((key) => ({ DeleteRequest: { Key: { pk: key['pk'], sk: key['sk'] } } })),
    );
    this.messages.forget(upgradeId);
    return withoutKeys<UpgradeSession>(out.Attributes);
  }

  async parkForOperator(upgradeId: string, taskToken: string, wait: OperatorWait): Promise<boolean> {
    await this.ensureOperatorMap(upgradeId);
    const gate = 'paused' in wait ? '#operator.#paused = :true' : '(attribute_not_exists(#operator.#approved) OR NOT contains(#operator.#approved, :wave))';
    const out = await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: 'SET #operator.#token = :token',
          ConditionExpression: `#state = :updating AND ${gate}`,
          ExpressionAttributeNames: {
            '#operator': 'operator',
            '#token': 'taskToken',
            '#state': 'state',
            ...('paused' in wait ? { '#paused': 'paused' } : { '#approved': 'approvedWaves' }),
          },
          ExpressionAttributeValues: {
            ':token': taskToken,
            ':updating': 'UPDATING' satisfies SessionState,
            ...('paused' in wait ? { ':true': true } : { ':wave': wait.wave }),
          },
        }),
      ),
    );
    return out !== CONDITION_FAILED;
  }

  /** A nested path cannot be set in the update that creates its parent map: the operator map is created first. */
  private async ensureOperatorMap(upgradeId: string): Promise<void> {
    await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: 'SET #operator = if_not_exists(#operator, :empty)',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#operator': 'operator' },
          ExpressionAttributeValues: { ':empty': {} },
        }),
      ),
      () => new SessionNotFoundError(upgradeId),
    );
  }

  appendMessage(upgradeId: string, message: string): Promise<void> {
    return this.messages.appendMessage(upgradeId, message);
  }

  latestMessage(upgradeId: string): Promise<string | undefined> {
    return this.messages.latestMessage(upgradeId);
  }

  listMessages(upgradeId: string): Promise<string[]> {
    return this.messages.listMessages(upgradeId);
  }

  listTimedMessages(upgradeId: string): Promise<{ at: string; text: string }[]> {
    return this.messages.listTimedMessages(upgradeId);
  }

  getPlanSlice(upgradeId: string, start: number, end: number): Promise<string[]> {
    return readPlanSlice(this.client, this.tableName, upgradeId, start, end);
  }

  getPlanWlmNames(upgradeId: string, start: number, end: number): Promise<string[]> {
    return readPlanSlice(this.client, this.tableName, upgradeId, start, end, 'wlmNodes');
  }

  async getNodes(upgradeId: string, nodes: readonly { name: string; index: number }[]): Promise<NodeRecord[]> {
    const items = await batchGetAll(
      this.client,
      this.tableName,
      nodes.map((node) => nodeKey(upgradeId, node.name)),
    );
    const byName = new Map(items.map((item) => [item.name as string, withoutKeys<NodeRecord>(item)]));
    return nodes.map((node) => byName.get(node.name) ?? { name: node.name, index: node.index, status: 'NOT_STARTED' });
  }

  async putNodes(upgradeId: string, records: readonly NodeRecord[]): Promise<void> {
    // One BatchWriteItem may not name a key twice: the last record of a node wins, as sequential puts would.
    const latest = new Map(records.map((record) => [record.name, record]));
    await batchWriteAll(
      this.client,
      this.tableName,
      [...latest.values()].map((record) => ({ PutRequest: { Item: { ...withoutUndefined(record), ...nodeKey(upgradeId, record.name) } } })),
    );
  }

  async listNodes(upgradeId: string): Promise<NodeRecord[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': sessionPk(upgradeId), ':prefix': NODE_SK_PREFIX },
      ConsistentRead: true,
    });
    // The table sorts by name; callers think in plan order.
    return items.map((item) => withoutKeys<NodeRecord>(item)).sort((a, b) => a.index - b.index);
  }

  tryLockNodes(owner: string, nodes: readonly string[], leaseSeconds?: number): Promise<Map<string, string>> {
    return this.locks.tryLockNodes(owner, nodes, leaseSeconds);
  }

  renewNodeLocks(owner: string, held: ReadonlyMap<string, number>, leaseSeconds?: number): Promise<Map<string, NodeLock | undefined>> {
    return this.locks.renewNodeLocks(owner, held, leaseSeconds);
  }

  releaseNodeLocks(owner: string, nodes: readonly string[]): Promise<void> {
    return this.locks.releaseNodeLocks(owner, nodes);
  }

  getLockOwners(nodes: readonly string[]): Promise<Map<string, string>> {
    return this.locks.getLockOwners(nodes);
  }

  getNodeLocks(nodes: readonly string[]): Promise<Map<string, NodeLock>> {
    return this.locks.getNodeLocks(nodes);
  }

  knownRuns(ids: readonly string[]): Promise<Set<string>> {
    return this.locks.knownRuns(ids);
  }
}
