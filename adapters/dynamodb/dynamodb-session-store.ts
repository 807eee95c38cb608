import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SessionNotFoundError, StaleWriteError } from '../../core/errors';
import { stepCount } from '../../core/rolling-upgrade/step-plan';
import {
  ENDED_SESSION_STATES,
  SESSION_CANCEL,
  SESSION_STOP,
  SESSION_STOP_WITHDRAWN,
  type NodeRecord,
  type Progress,
  type SessionState,
  type UpgradeSession,
} from '../../core/rolling-upgrade/session';
import type { OperatorGateChange, SessionStore } from '../../ports/session-store';
import type { OperatorWait } from '../../core/rolling-upgrade/operator-gate';
import type { SiteEventKind } from '../../core/site/site-event';
import { batchGetAll, batchWriteAll } from './batch';
import { CONDITION_FAILED, ITEM_ON_FAILURE, conditionalWrite, conditionalWriteOrItem, withoutKeys, withoutUndefined } from './items';
import { DynamoDbNodeLocks } from './node-locks';
import { DynamoDbRunStore, type DynamoDbRunStoreOptions, type RunRecordDesign } from './run-store';

export { DEFAULT_LOCK_LEASE_SECONDS } from './node-locks';
import { planChunkWrites, readPlanSlice, surplusPlanChunkDeletes } from './plan-chunks';
import { queryAll } from './query';
import { NODE_SK_PREFIX, SESSIONS_GSI_PARTITION, nodeKey, sessionGsi1Sk, sessionKey, sessionPk } from './table-design';

export interface DynamoDbSessionStoreOptions extends DynamoDbRunStoreOptions {
  /** Lease of a node lock when the caller names none. Default DEFAULT_LOCK_LEASE_SECONDS. */
  lockLeaseSeconds?: number;
}

/** An upgrade session's record: its status is CRUS's `state`, moved by core's rules (core/rolling-upgrade/session.ts). */
export const SESSION_RECORD: RunRecordDesign<UpgradeSession, SessionState> = {
  key: sessionKey,
  partition: sessionPk,
  listedUnder: SESSIONS_GSI_PARTITION,
  statusAttribute: 'state',
  statusOf: (session) => session.state,
  fromItem: (item) => withoutKeys<UpgradeSession>(item),
  notFound: (upgradeId) => new SessionNotFoundError(upgradeId),
  cancel: SESSION_CANCEL,
  stop: SESSION_STOP,
  ended: ENDED_SESSION_STATES,
};

/** SessionStore on the single-table design of table-design.ts; see that file for the item layout. */
export class DynamoDbSessionStore extends DynamoDbRunStore<UpgradeSession, SessionState> implements SessionStore {
  /** The node locks every workflow of this table shares. */
  readonly locks: DynamoDbNodeLocks;

  constructor(options: DynamoDbSessionStoreOptions) {
    super(options, SESSION_RECORD);
    this.locks = new DynamoDbNodeLocks({
      client: this.client,
      tableName: this.tableName,
      clock: this.clock,
      ...(options.lockLeaseSeconds ? { lockLeaseSeconds: options.lockLeaseSeconds } : {}),
    });
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

  getSession(upgradeId: string): Promise<UpgradeSession | undefined> {
    return this.read(upgradeId);
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

  async reopenStopped(upgradeId: string, progress: Progress): Promise<UpgradeSession> {
    // A stop nothing finished (STOPPING) is withdrawn: UPDATING again, its progress as it is (or, stopped in between, reopened below).
    await this.transition(upgradeId, SESSION_STOP_WITHDRAWN);
    const stopped = 'STOPPED' satisfies SessionState;
    // Either the stopped session (state and stage), or one cancelled while stopped (the stage alone).
    const out = await conditionalWriteOrItem(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: 'SET #progress = :progress, #state = :updating',
          ConditionExpression: '#state = :stopped AND #progress.#stage = :stopped',
          ExpressionAttributeNames: { '#progress': 'progress', '#stage': 'stage', '#state': 'state' },
          ExpressionAttributeValues: { ':progress': withoutUndefined(progress), ':updating': 'UPDATING' satisfies SessionState, ':stopped': stopped },
          ReturnValues: 'ALL_NEW',
          ...ITEM_ON_FAILURE,
        }),
      ),
    );
    if ('written' in out) return withoutKeys<UpgradeSession>(out.written.Attributes ?? {});
    if (!out.failed) throw new SessionNotFoundError(upgradeId);
    const current = withoutKeys<UpgradeSession>(out.failed);
    if (current.progress.stage === 'STOPPED') {
      await this.saveProgress(upgradeId, current.progress, progress);
      return { ...current, progress };
    }
    return current;
  }

  async setOperatorGate(upgradeId: string, change: OperatorGateChange): Promise<UpgradeSession> {
    const update: { set: string; names: Record<string, string>; values: Record<string, unknown> } =
      'paused' in change
        ? { set: '#operator.#paused = :paused', names: { '#paused': 'paused' }, values: { ':paused': change.paused } }
        : {
            set: '#operator.#approved = list_append(if_not_exists(#operator.#approved, :none), :wave)',
            names: { '#approved': 'approvedWaves' },
            values: { ':none': [], ':wave': [change.approveWave] },
          };
    // The session as this write left it (ALL_NEW): the token of a workflow parked before it, which must wake to see the change (one parked after it saw it).
    const write = () =>
      conditionalWriteOrItem(
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: sessionKey(upgradeId),
            UpdateExpression: `SET ${update.set}`,
            ConditionExpression: 'attribute_exists(#operator)',
            ExpressionAttributeNames: { '#operator': 'operator', ...update.names },
            ExpressionAttributeValues: update.values,
            ReturnValues: 'ALL_NEW',
            ...ITEM_ON_FAILURE,
          }),
        ),
      );
    let out = await write();
    if ('failed' in out && out.failed) {
      // No gate or park has given the session its operator map yet (a nested path cannot be set in a missing map): once, then the gate.
      await this.ensureOperatorMap(upgradeId);
      out = await write();
    }
    if ('failed' in out) throw new SessionNotFoundError(upgradeId);
    return withoutKeys<UpgradeSession>(out.written.Attributes ?? {});
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

  async parkForSiteEvent(upgradeId: string, taskToken: string, seen: number, events: readonly SiteEventKind[]): Promise<boolean> {
    const out = await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: events.length > 0 ? 'SET #token = :token, #events = :events' : 'SET #token = :token REMOVE #events',
          // A session still running (a stop or a cancel lets its nodes in flight finish): a request changes the count too.
          ConditionExpression: `#state IN (:updating, :stopping, :deleting) AND ${seen === 0 ? '(attribute_not_exists(#count) OR #count = :seen)' : '#count = :seen'}`,
          ExpressionAttributeNames: { '#token': 'siteWaitToken', '#events': 'siteWaitEvents', '#state': 'state', '#count': 'siteEventCount' },
          ExpressionAttributeValues: {
            ':token': taskToken,
            ...(events.length > 0 ? { ':events': [...events] } : {}),
            ':updating': 'UPDATING' satisfies SessionState,
            ':stopping': 'STOPPING' satisfies SessionState,
            ':deleting': 'DELETING' satisfies SessionState,
            ':seen': seen,
          },
        }),
      ),
    );
    return out !== CONDITION_FAILED;
  }

  async noteSiteEvent(upgradeId: string, event?: SiteEventKind): Promise<{ taskToken?: string } | undefined> {
    const out = await conditionalWriteOrItem(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: 'SET #count = if_not_exists(#count, :zero) + :one REMOVE #token, #events',
          // A firing of a kind the parked wait does not end leaves it parked, uncounted (it reads the site when it wakes).
          ConditionExpression:
            event === undefined
              ? 'attribute_exists(pk)'
              : 'attribute_exists(pk) AND (attribute_not_exists(#token) OR attribute_not_exists(#events) OR contains(#events, :event))',
          ExpressionAttributeNames: { '#token': 'siteWaitToken', '#events': 'siteWaitEvents', '#count': 'siteEventCount' },
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ...(event === undefined ? {} : { ':event': event }) },
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    if ('failed' in out) return undefined;
    const token = out.written.Attributes?.siteWaitToken as string | undefined;
    return token ? { taskToken: token } : {};
  }

  async setSiteTriggers(upgradeId: string, armed: UpgradeSession['siteTriggers']): Promise<void> {
    await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: sessionKey(upgradeId),
          UpdateExpression: armed ? 'SET #armed = :armed' : 'REMOVE #armed',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#armed': 'siteTriggers' },
          ...(armed ? { ExpressionAttributeValues: { ':armed': armed } } : {}),
        }),
      ),
      () => new SessionNotFoundError(upgradeId),
    );
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
}
