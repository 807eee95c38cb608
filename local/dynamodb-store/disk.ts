import { Level } from 'level';
import type { Item } from './attribute-values';
import { DynamoDbStore, type Change, type ChangeSink } from './store';
import type { TableDefinition } from './table';

/**
 * A data directory's tables on disk (LevelDB): every change the store makes is written through
 * before the operation answers, batched with those made meanwhile (one LevelDB write per batch,
 * in the order they were made), and the whole database is read back into memory on open.
 *
 * Layout: `rs~format` (1), `rs~table~<name>` (the table's definition), `rs~item~<table>~<key>` (an
 * item in DynamoDB's JSON form, keyed by its key values). A directory dynalite wrote (the embedded
 * store before this one: `table~<name>`, `item-<name>~...`) is converted once, on open.
 */
const FORMAT_KEY = 'rs~format';
const TABLE_PREFIX = 'rs~table~';
const ITEM_PREFIX = 'rs~item~';
const FORMAT = 1;

type Operation = { type: 'put'; key: string; value: unknown } | { type: 'del'; key: string };

export class DiskTables implements ChangeSink {
  private queue: { operations: Operation[]; done: (err?: unknown) => void }[] = [];
  private flushing: Promise<void> | undefined;

  private constructor(private readonly db: Level<string, unknown>) {}

  /** Opens (creating) the database; throws LevelDB's own error when it cannot (locked, damaged). */
  static async open(dir: string): Promise<DiskTables> {
    const db = new Level<string, unknown>(dir, { valueEncoding: 'json' });
    await db.open();
    return new DiskTables(db);
  }

  /** Whether the database holds nothing at all (not even its format): one whose creation was cut short. */
  async isEmpty(): Promise<boolean> {
    for await (const _key of this.db.keys({ limit: 1 })) return false;
    return true;
  }

  /** Loads every table into the store, converting a dynalite directory first. */
  async loadInto(store: DynamoDbStore): Promise<void> {
    if ((await this.db.get(FORMAT_KEY)) === undefined) await this.convertFromDynalite();
    const definitions: TableDefinition[] = [];
    for await (const [, value] of this.db.iterator({ gte: TABLE_PREFIX, lt: `${TABLE_PREFIX}\uffff` })) definitions.push(value as TableDefinition);
    for (const definition of definitions) {
      const prefix = `${ITEM_PREFIX}${definition.name}~`;
      const items: Item[] = [];
      for await (const value of this.db.values({ gte: prefix, lt: `${prefix}\uffff` })) items.push(value as Item);
      store.restore(definition, items);
    }
  }

  write(changes: Change[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ operations: changes.map(operationOf), done: (err) => (err ? reject(err) : resolve()) });
      this.flushing ??= this.flush();
    });
  }

  /** Writes what is queued, one batch at a time, until nothing is. */
  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          await this.db.batch(batch.flatMap((b) => b.operations));
          for (const b of batch) b.done();
        } catch (err) {
          for (const b of batch) b.done(err);
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Waits for queued writes, then closes the database (the directory can then be opened again). */
  async close(): Promise<void> {
    while (this.flushing) await this.flushing;
    await this.db.close();
  }

  /** dynalite kept `table~<name>` (a TableDescription) and `item-<name>~<key>` (an item): rewrite them in this layout, once. */
  private async convertFromDynalite(): Promise<void> {
    const converted = new CollectingSink();
    const scratch = new DynamoDbStore(converted);
    const legacyKeys: string[] = [];
    for await (const [key, value] of this.db.iterator({ gte: 'table~', lt: 'table~\uffff' })) {
      legacyKeys.push(key);
      const description = value as Record<string, unknown>;
      const name = description.TableName as string;
      await scratch.execute('CreateTable', {
        TableName: name,
        AttributeDefinitions: description.AttributeDefinitions,
        KeySchema: description.KeySchema,
        ...(description.GlobalSecondaryIndexes ? { GlobalSecondaryIndexes: description.GlobalSecondaryIndexes } : {}),
        ...(description.LocalSecondaryIndexes ? { LocalSecondaryIndexes: description.LocalSecondaryIndexes } : {}),
      });
      for await (const [itemKey, item] of this.db.iterator({ gte: `item-${name}~`, lt: `item-${name}~\uffff` })) {
        legacyKeys.push(itemKey);
        await scratch.execute('PutItem', { TableName: name, Item: item });
      }
    }
    // dynalite's index entries go too.
    for await (const key of this.db.keys({ gte: 'index-', lt: 'index-\uffff' })) legacyKeys.push(key);
    await this.db.batch([
      ...converted.changes.map(operationOf),
      ...legacyKeys.map((key): Operation => ({ type: 'del', key })),
      { type: 'put', key: FORMAT_KEY, value: FORMAT },
    ]);
  }
}

function operationOf(change: Change): Operation {
  if (change.kind === 'table') {
    return change.definition ? { type: 'put', key: TABLE_PREFIX + change.table, value: change.definition } : { type: 'del', key: TABLE_PREFIX + change.table };
  }
  const key = `${ITEM_PREFIX}${change.table}~${change.key}`;
  return change.item ? { type: 'put', key, value: change.item } : { type: 'del', key };
}

/** Keeps the changes a store made (to learn each item's disk key). */
class CollectingSink implements ChangeSink {
  readonly changes: Change[] = [];
  async write(changes: Change[]): Promise<void> {
    this.changes.push(...changes);
  }
}
