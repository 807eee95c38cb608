import { DeleteCommand, GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../../core/clock';
import { systemClock } from '../../core/clock';
import { SessionNotCancellableError, SessionNotStoppableError } from '../../core/errors';
import { RUN_CANCEL, RUN_STOP, type RunStatus, type StatusTransition } from '../../core/run-status';
import type { RunStore } from '../../ports/run-store';
import { batchWriteAll } from './batch';
import { ITEM_ON_FAILURE, conditionalWrite } from './items';
import { conditionalWriteOrItem } from './items';
import { DynamoDbMessageLog } from './message-log';
import { queryAll } from './query';
import { GSI1_PARTITION_KEY, SESSIONS_BY_CREATION_INDEX, type ItemKey } from './table-design';

export interface DynamoDbRunStoreOptions {
  tableName: string;
  /** Injected, never built from the environment here: the Lambda, the CLI and the tests each bring their own. */
  client: DynamoDBDocumentClient;
  /** Time of message timestamps; the embedded engine passes its simulated clock. Default: system time. */
  clock?: Clock;
}

/** One kind of run's record on the table, as the shared run-store logic needs it. */
export interface RunRecordDesign<Run, Status extends string> {
  /** The run's record, and the partition that holds it with the run's other items (plan, messages, ...). */
  key(id: string): ItemKey;
  partition(id: string): string;
  /** The GSI1 partition listing the runs of this kind. */
  listedUnder: string;
  /** The attribute that holds the status (an upgrade's is `state`, as CRUS names it). */
  statusAttribute: string;
  statusOf(run: Run): Status;
  fromItem(item: Record<string, unknown>): Run;
  notFound(id: string): Error;
  /** Core's rules for an operator's cancel and stop. */
  cancel: StatusTransition<Status>;
  stop: StatusTransition<Status>;
  /** The statuses a run has ended in: only such a run is removed. */
  ended: readonly Status[];
  /**
   * A run that its own cancel or stop may not reach, whatever its status (a group's deploy phase: its
   * deployment's does): the condition that keeps it out, and, for a run it kept out, why.
   */
  reachable?: { condition: string; refusal(run: Run, request: 'cancel' | 'stop'): string | undefined };
}

/**
 * The design of a run whose `status` core's rules for runs move (core/run-status.ts): a deployment's or a
 * task run's. A stopping or STOPPED run can be cancelled too: its running pass or its resume winds it down.
 */
export function runStatusRecordDesign<Run extends { status: RunStatus }>(
  kind: Omit<RunRecordDesign<Run, RunStatus>, 'statusAttribute' | 'statusOf' | 'cancel' | 'stop'>,
): RunRecordDesign<Run, RunStatus> {
  return { ...kind, statusAttribute: 'status', statusOf: (run) => run.status, cancel: RUN_CANCEL, stop: RUN_STOP };
}

/** A transition's outcome: the run after it, or the run as the failed condition saw it. */
export type Transition<Run> = { moved: Run } | { refused: Run };

/**
 * What the three run stores (upgrade sessions, deployments, task runs) do alike, written once: the list,
 * the operator's cancel and stop (each one conditional write by core's rules), a removal of an ended
 * run, the generation note, and the run's messages. A failed condition says why in the same call
 * (ReturnValuesOnConditionCheckFailure): no read follows it.
 */
export abstract class DynamoDbRunStore<Run, Status extends string> implements RunStore<Run> {
  protected readonly tableName: string;
  protected readonly client: DynamoDBDocumentClient;
  protected readonly clock: Clock;
  /** The run's messages, in its own partition. */
  readonly messages: DynamoDbMessageLog;

  constructor(
    options: DynamoDbRunStoreOptions,
    private readonly design: RunRecordDesign<Run, Status>,
  ) {
    this.tableName = options.tableName;
    this.client = options.client;
    this.clock = options.clock ?? systemClock;
    this.messages = new DynamoDbMessageLog({ client: this.client, tableName: this.tableName, clock: this.clock, partitionOf: design.partition });
  }

  /** The run's record, read consistently; undefined for an id no run of this kind has. */
  protected async read(id: string): Promise<Run | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: this.design.key(id), ConsistentRead: true }));
    return Item ? this.design.fromItem(Item) : undefined;
  }

  async list(): Promise<Run[]> {
    // GSIs cannot be read consistently (AWS rejects ConsistentRead here): a run created a moment ago may be missing.
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      IndexName: SESSIONS_BY_CREATION_INDEX,
      KeyConditionExpression: '#p = :p',
      ExpressionAttributeNames: { '#p': GSI1_PARTITION_KEY },
      ExpressionAttributeValues: { ':p': this.design.listedUnder },
      ScanIndexForward: false,
    });
    return items.map((item) => this.design.fromItem(item));
  }

  requestCancel(id: string): Promise<Run> {
    return this.request(id, 'cancel', (why) => new SessionNotCancellableError(id, why));
  }

  requestStop(id: string): Promise<Run> {
    return this.request(id, 'stop', (why) => new SessionNotStoppableError(id, why));
  }

  /** An operator's request, by core's rule for it: the run after it, or `refused` naming why (its status, or where it is reached from). */
  private async request(id: string, request: 'cancel' | 'stop', refused: (why: string) => Error): Promise<Run> {
    const out = await this.transition(id, this.design[request], { onlyIf: this.design.reachable?.condition });
    if ('moved' in out) return out.moved;
    throw refused(this.design.reachable?.refusal(out.refused, request) ?? this.design.statusOf(out.refused));
  }

  /**
   * Moves the run's status by one of core's transitions, in one conditional write (`onlyIf` adds to its
   * condition, `remove` names attributes it removes): the run after it, or, when its status was not one the
   * transition starts from, the run as the failed condition saw it. Throws the kind's not-found error.
   */
  protected async transition(
    id: string,
    rule: StatusTransition<Status>,
    options: { onlyIf?: string | undefined; remove?: string } = {},
  ): Promise<Transition<Run>> {
    const from = Object.fromEntries(rule.from.map((status, i) => [`:from${i}`, status]));
    const out = await conditionalWriteOrItem(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.design.key(id),
          UpdateExpression: `SET #status = :to${options.remove ? ` REMOVE ${options.remove}` : ''}`,
          ConditionExpression: `#status IN (${Object.keys(from).join(', ')})${options.onlyIf ? ` AND ${options.onlyIf}` : ''}`,
          ExpressionAttributeNames: { '#status': this.design.statusAttribute },
          ExpressionAttributeValues: { ':to': rule.to, ...from },
          ReturnValues: 'ALL_NEW',
          ...ITEM_ON_FAILURE,
        }),
      ),
    );
    if ('written' in out) return { moved: this.design.fromItem(out.written.Attributes ?? {}) };
    if (!out.failed) throw this.design.notFound(id);
    return { refused: this.design.fromItem(out.failed) };
  }

  /**
   * Removes a run that has ended, then the rest of its partition (plan, nodes, results, messages); returns
   * it as it was. The kind's not-found error; or SessionNotCancellableError for one that has not ended (cancel it first).
   */
  async removeEnded(id: string): Promise<Run> {
    const ended = Object.fromEntries(this.design.ended.map((status, i) => [`:ended${i}`, status]));
    const out = await conditionalWriteOrItem(
      this.client.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: this.design.key(id),
          ConditionExpression: `#status IN (${Object.keys(ended).join(', ')})`,
          ExpressionAttributeNames: { '#status': this.design.statusAttribute },
          ExpressionAttributeValues: ended,
          ReturnValues: 'ALL_OLD',
          ...ITEM_ON_FAILURE,
        }),
      ),
    );
    if ('failed' in out) {
      if (!out.failed) throw this.design.notFound(id);
      throw new SessionNotCancellableError(id, `${this.design.statusOf(this.design.fromItem(out.failed))} (it has not ended: cancel it first)`);
    }
    if (!out.written.Attributes) throw this.design.notFound(id);
    // The record first (it is what readers look for), then the rest of its partition; a retry finishes the rest.
    const rest = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': this.design.partition(id) },
      ProjectionExpression: 'pk, sk',
      ConsistentRead: true,
    });
    await batchWriteAll(
      this.client,
      this.tableName,
      rest.map((key) => ({ DeleteRequest: { Key: { pk: key['pk'], sk: key['sk'] } } })),
    );
    this.messages.forget(id);
    this.forgetCached(id);
    return this.design.fromItem(out.written.Attributes);
  }

  /** Drops what this process caches of a removed run beyond its messages' (a kind's plan cache). */
  protected forgetCached(_id: string): void {}

  async noteGeneration(id: string, generation: number): Promise<void> {
    await conditionalWrite(
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.design.key(id),
          UpdateExpression: 'SET #generation = :g',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#generation) OR #generation < :g)',
          ExpressionAttributeNames: { '#generation': 'generation' },
          ExpressionAttributeValues: { ':g': generation },
        }),
      ),
    );
  }
}
