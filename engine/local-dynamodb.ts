import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { Level } from 'level';
import { createTableInput } from '../adapters/dynamodb/table-design';
import { describeError } from '../core/errors';
import { DataDirDamagedError, DataDirInUseError } from './errors';

export const DEFAULT_TABLE_NAME = 'rollout';

/** A DynamoDB endpoint with the rollout table, and clients for it. */
export interface LocalDynamoDb {
  endpoint: string;
  tableName: string;
  client: DynamoDBDocumentClient;
  rawClient: DynamoDBClient;
  /** Stops the clients (and the dynalite server, if this process started it). */
  close(): Promise<void>;
}

export interface StartLocalDynamoDbOptions {
  /** LevelDB directory (created if missing) that keeps sessions across runs; in memory without it. */
  dataDir?: string;
  tableName?: string;
}

const TABLE_ACTIVE_TIMEOUT_MS = 10_000;

/**
 * Starts dynalite on a free local port with the rollout table: the embedded default's DynamoDB.
 * Only one process may open a data directory at a time (LevelDB holds a lock; a second open crashes);
 * other processes reach it with connectDynamoDb.
 */
export async function startLocalDynamoDb(options: StartLocalDynamoDbOptions = {}): Promise<LocalDynamoDb> {
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  const existed = options.dataDir ? await checkDatabaseOpens(options.dataDir) : false;
  const server = dynalite({ createTableMs: 0, ...(options.dataDir ? { path: options.dataDir } : {}) });
  const port = await listen(server);
  const connection = connectDynamoDb({ endpoint: `http://127.0.0.1:${port}`, tableName });
  try {
    // Every run creates the table at once: a database without it lost its data (a truncated log), and is not quietly started afresh.
    if (existed && !(await tableExists(connection.rawClient, tableName))) {
      throw new DataDirDamagedError(options.dataDir!, `its database has no '${tableName}' table (files truncated or removed)`, DAMAGED_DATABASE_REMEDY);
    }
    await ensureTable(connection.rawClient, tableName);
  } catch (err) {
    await connection.close();
    await closeServer(server);
    throw err;
  }
  return {
    ...connection,
    async close() {
      // Clients first: the server's close waits for open connections.
      await connection.close();
      await closeServer(server);
    },
  };
}

const DAMAGED_DATABASE_REMEDY = 'restore the directory from a backup, or move it aside to start again with no sessions';

/**
 * Opens the directory's LevelDB once before dynalite does: dynalite throws a failed open from a
 * request callback, which would crash the process with "Database is closed". Returns whether a
 * database was there already (its CURRENT file).
 */
async function checkDatabaseOpens(dataDir: string): Promise<boolean> {
  await mkdir(dataDir, { recursive: true });
  const existed = await access(path.join(dataDir, 'CURRENT')).then(
    () => true,
    () => false,
  );
  const db = new Level(dataDir);
  try {
    await db.open();
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code === 'LEVEL_LOCKED') throw new DataDirInUseError(dataDir);
    throw new DataDirDamagedError(dataDir, `its database does not open (${cause?.message ?? describeError(err)})`, DAMAGED_DATABASE_REMEDY, { cause: err });
  } finally {
    await db.close();
  }
  return existed;
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

/** Clients for an endpoint another process serves (a second CLI reaching the first one's dynalite). */
export function connectDynamoDb(options: { endpoint: string; tableName: string }): LocalDynamoDb {
  const rawClient = new DynamoDBClient({
    endpoint: options.endpoint,
    region: 'local',
    // dynalite checks no signature, but the SDK refuses to sign without credentials.
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const client = DynamoDBDocumentClient.from(rawClient, { marshallOptions: { removeUndefinedValues: true } });
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
  /** e.g. { PutItemCommand: 12, QueryCommand: 3 } */
  byCommand(): Record<string, number>;
}

/**
 * Counts commands with an `initialize` middleware: once per command sent, not per HTTP retry.
 * DocumentClients share the stack of the client they wrap, so their commands count under the low-level name.
 */
export function countRequests(rawClient: DynamoDBClient): RequestCounter {
  const counts: Record<string, number> = {};
  let total = 0;
  let itemsRead = 0;
  rawClient.middlewareStack.add(
    (next, context) => async (args) => {
      total++;
      const name = context.commandName ?? 'unknown';
      counts[name] = (counts[name] ?? 0) + 1;
      const result = await next(args);
      itemsRead += itemsOf(result.output as ReadOutput);
      return result;
    },
    { step: 'initialize' },
  );
  return {
    get total() {
      return total;
    },
    get itemsRead() {
      return itemsRead;
    },
    byCommand: () => ({ ...counts }),
  };
}

type ReadOutput = { Item?: unknown; Responses?: Record<string, unknown[]>; Count?: number } | undefined;

function itemsOf(output: ReadOutput): number {
  if (!output) return 0;
  if (output.Responses) return Object.values(output.Responses).reduce((sum, items) => sum + items.length, 0);
  if (typeof output.Count === 'number') return output.Count;
  return output.Item ? 1 : 0;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  // dynalite's close also closes its LevelDB, so the same directory can be opened again afterwards.
  return new Promise((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
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
