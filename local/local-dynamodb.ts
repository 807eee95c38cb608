import { access, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, type TranslateConfig } from '@aws-sdk/lib-dynamodb';
import { createTableInput } from '../adapters/dynamodb/table-design';
import { describeError } from '../core/errors';
import { DiskTables } from './dynamodb-store/disk';
import { serveDynamoDb } from './dynamodb-store/http-endpoint';
import { inProcessClients, inProcessListeners, METERED } from './dynamodb-store/in-process-clients';
import { DynamoDbStore } from './dynamodb-store/store';
import { DataDirDamagedError, DataDirInUseError } from './errors';

export const DEFAULT_TABLE_NAME = 'rollout';

/** A DynamoDB endpoint with the rollout table, and clients for it. */
export interface LocalDynamoDb {
  endpoint: string;
  tableName: string;
  client: DynamoDBDocumentClient;
  rawClient: DynamoDBClient;
  /** Stops the clients (and the store's endpoint and database, if this process started them). */
  close(): Promise<void>;
}

export interface StartLocalDynamoDbOptions {
  /** LevelDB directory (created if missing) that keeps sessions across runs; in memory without it. */
  dataDir?: string;
  tableName?: string;
  /** Loopback port of its endpoint (`rollout serve --dynamodb-port`); 0 or none: any free port. */
  port?: number;
}

/** How every client of the sessions marshals: optional fields left unset are dropped, not refused. */
const TRANSLATE: TranslateConfig = { marshallOptions: { removeUndefinedValues: true } };

/**
 * Starts the embedded DynamoDB (local/dynamodb-store: in memory, written through to a LevelDB in
 * `dataDir` when given) with the rollout table, served on a free loopback port for other processes,
 * and returns clients that reach it in-process (the same SDK classes, without the HTTP round trip).
 * Only one process may open a data directory at a time (LevelDB holds a lock); other processes
 * reach it with connectDynamoDb.
 */
export async function startLocalDynamoDb(options: StartLocalDynamoDbOptions = {}): Promise<LocalDynamoDb> {
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  const disk = options.dataDir ? await openDisk(options.dataDir) : undefined;
  const store = new DynamoDbStore(disk?.tables);
  let endpoint: Awaited<ReturnType<typeof serveDynamoDb>> | undefined;
  try {
    if (disk) {
      await disk.tables.loadInto(store).catch((err: unknown) => {
        throw new DataDirDamagedError(options.dataDir!, `its database cannot be read (${describeError(err)})`, DAMAGED_DATABASE_REMEDY, { cause: err });
      });
    }
    endpoint = await serveDynamoDb(store, options.port ?? 0);
    const { rawClient, client } = inProcessClients(store, endpoint.url, TRANSLATE);
    // Every run creates the table at once: a database without it lost its data (a truncated log), and is not quietly started afresh;
    // unless it was never made whole: a process killed between LevelDB's first files and the table (kill -9 as it starts) left it empty.
    if (disk?.existed && !(await tableExists(rawClient, tableName)) && (disk.initialized || !disk.empty)) {
      throw new DataDirDamagedError(options.dataDir!, `its database has no '${tableName}' table (files truncated or removed)`, DAMAGED_DATABASE_REMEDY);
    }
    await ensureTable(rawClient, tableName);
    // The table is on disk (a write is through before it answers): from now on, a database without it is damaged.
    if (disk && !disk.initialized) await writeFile(path.join(options.dataDir!, INITIALIZED_MARK), '');
    const listener = endpoint;
    return {
      endpoint: listener.url,
      tableName,
      client,
      rawClient,
      async close() {
        client.destroy();
        rawClient.destroy();
        await listener.close();
        // Once the writes are on disk and the database is closed, the directory can be opened again.
        await disk?.tables.close();
      },
    };
  } catch (err) {
    await endpoint?.close();
    await disk?.tables.close();
    throw err;
  }
}

const TABLE_ACTIVE_TIMEOUT_MS = 10_000;
/** Written once the directory's database holds the table (beside LevelDB's files, which LevelDB leaves alone). */
const INITIALIZED_MARK = 'rollout-table-created';
const DAMAGED_DATABASE_REMEDY = 'restore the directory from a backup, or move it aside to start again with no sessions';

/**
 * Opens the directory's LevelDB, saying what is wrong when it cannot: held by another process, or
 * damaged (a broken CURRENT or MANIFEST). Also tells whether a database was there already (its
 * CURRENT file), which must then hold the table, and whether it was ever made whole (INITIALIZED_MARK).
 */
async function openDisk(dataDir: string): Promise<{ tables: DiskTables; existed: boolean; initialized: boolean; empty: boolean }> {
  await mkdir(dataDir, { recursive: true });
  const exists = (file: string) =>
    access(path.join(dataDir, file)).then(
      () => true,
      () => false,
    );
  const [existed, initialized] = await Promise.all([exists('CURRENT'), exists(INITIALIZED_MARK)]);
  try {
    const tables = await DiskTables.open(dataDir);
    // Read before anything is loaded (loading writes the format key).
    return { tables, existed, initialized, empty: await tables.isEmpty() };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code === 'LEVEL_LOCKED') throw new DataDirInUseError(dataDir);
    throw new DataDirDamagedError(dataDir, `its database does not open (${cause?.message ?? describeError(err)})`, DAMAGED_DATABASE_REMEDY, { cause: err });
  }
}

async function tableExists(rawClient: DynamoDBClient, tableName: string): Promise<boolean> {
  try {
    await rawClient.send(new DescribeTableCommand({ TableName: tableName }));
    return true;
  } catch (err) {
    if ((err as { name?: string }).name === 'ResourceNotFoundException') return false;
    throw err;
  }
}

/** Clients for an endpoint another process serves (a second CLI reaching the first one's store). */
export function connectDynamoDb(options: { endpoint: string; tableName: string }): LocalDynamoDb {
  const rawClient = new DynamoDBClient({
    endpoint: options.endpoint,
    region: 'local',
    // The embedded store checks no signature, but the SDK refuses to sign without credentials.
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const client = DynamoDBDocumentClient.from(rawClient, TRANSLATE);
  return {
    endpoint: options.endpoint,
    tableName: options.tableName,
    client,
    rawClient,
    async close() {
      client.destroy();
      rawClient.destroy();
    },
  };
}

/** Counts of the DynamoDB commands sent through one client (and every DocumentClient built on it). */
export interface RequestCounter {
  readonly total: number;
  /** Items the reads returned (GetItem, BatchGetItem, Query, Scan): what an increment's cost grows with. */
  readonly itemsRead: number;
  /**
   * Request units the commands consumed, as on-demand DynamoDB bills them (ConsumedCapacity): per item a batch or
   * transaction writes or reads, one per KB written, one per 4 KB read (half when eventually consistent), twice in
   * a transaction. A command that failed counts one unit (a refused conditional write is billed too).
   */
  readonly writeUnits: number;
  readonly readUnits: number;
  /** e.g. { PutItemCommand: 12, QueryCommand: 3 } */
  byCommand(): Record<string, number>;
}

/**
 * Counts commands with an `initialize` middleware: once per command sent, not per HTTP retry.
 * DocumentClients share the stack of the client they wrap, so their commands count under the low-level name;
 * the in-process clients of the embedded store report theirs the same way. Each command that consumes request
 * units asks for its ConsumedCapacity (left out of what the caller gets, unless it asked itself).
 */
export function countRequests(rawClient: DynamoDBClient): RequestCounter {
  const counts: Record<string, number> = {};
  let total = 0;
  let itemsRead = 0;
  const units = { read: 0, write: 0 };
  const ended = (name: string, output: Record<string, unknown> | undefined) => {
    total++;
    counts[name] = (counts[name] ?? 0) + 1;
    itemsRead += itemsOf(output as ReadOutput);
    addUnits(units, name, output);
  };
  // A client of the in-process store runs no middleware: it reports each command itself (failed ones too).
  const listeners = inProcessListeners(rawClient);
  if (listeners) {
    listeners.add((name, output) => ended(name, output));
  } else {
    rawClient.middlewareStack.add(
      (next, context) => async (args) => {
        const name = context.commandName ?? 'unknown';
        const input = args.input as Record<string, unknown>;
        const metered = METERED.has(name.replace(/Command$/, '')) && input.ReturnConsumedCapacity === undefined;
        let output: Record<string, unknown> | undefined;
        try {
          const result = await next(metered ? { ...args, input: { ...input, ReturnConsumedCapacity: 'TOTAL' } } : args);
          output = result.output as unknown as Record<string, unknown>;
          if (!metered) return result;
          const { ConsumedCapacity: _, ...asked } = output;
          return { ...result, output: asked as unknown as typeof result.output };
        } finally {
          ended(name, output);
        }
      },
      { step: 'initialize' },
    );
  }
  return {
    get total() {
      return total;
    },
    get itemsRead() {
      return itemsRead;
    },
    get writeUnits() {
      return units.write;
    },
    get readUnits() {
      return units.read;
    },
    byCommand: () => ({ ...counts }),
  };
}

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);

type Consumed = { CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number };

/** A command's request units from its ConsumedCapacity (one entry, or one per table); one unit when it reported none. */
function addUnits(units: { read: number; write: number }, name: string, output: Record<string, unknown> | undefined): void {
  if (!METERED.has(name.replace(/Command$/, ''))) return;
  const consumed = output?.ConsumedCapacity as Consumed | Consumed[] | undefined;
  const entries = consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed];
  const write = WRITES.has(name);
  if (entries.length === 0) {
    units[write ? 'write' : 'read'] += 1;
    return;
  }
  for (const entry of entries) {
    units.read += entry.ReadCapacityUnits ?? (write ? 0 : (entry.CapacityUnits ?? 0));
    units.write += entry.WriteCapacityUnits ?? (write ? (entry.CapacityUnits ?? 0) : 0);
  }
}

type ReadOutput = { Item?: unknown; Responses?: Record<string, unknown[]>; Count?: number } | undefined;

function itemsOf(output: ReadOutput): number {
  if (!output) return 0;
  if (output.Responses) return Object.values(output.Responses).reduce((sum, items) => sum + items.length, 0);
  if (typeof output.Count === 'number') return output.Count;
  return output.Item ? 1 : 0;
}

/** Creates the table unless it exists, then waits until it is ACTIVE. */
export async function ensureTable(rawClient: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await rawClient.send(new CreateTableCommand(createTableInput(tableName)));
  } catch (err) {
    // Already there: a data directory from an earlier run.
    if (!(err instanceof Error && err.name === 'ResourceInUseException')) throw err;
  }
  const deadline = Date.now() + TABLE_ACTIVE_TIMEOUT_MS;
  for (;;) {
    const { Table } = await rawClient.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() > deadline) throw new Error(`table ${tableName} is still ${Table?.TableStatus ?? 'unknown'} after ${TABLE_ACTIVE_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
