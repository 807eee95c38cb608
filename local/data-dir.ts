import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DataDirDamagedError, DataDirInUseError } from './errors';
import { startLocalDynamoDb, connectDynamoDb, type LocalDynamoDb } from './local-dynamodb';

/**
 * One process at a time owns a data directory: an on-disk LevelDB opens in one process only, and
 * a second open crashes that process. The owner claims the directory by creating `runtime.json`
 * exclusively before it opens the database, then announces its DynamoDB endpoint there; other
 * processes (`rollout session ...`) reach the sessions through that endpoint.
 */
export interface RuntimeAnnouncement {
  pid: number;
  /** Absent while the owner is still starting. */
  dynamoDbEndpoint?: string;
  tableName?: string;
  /** True for a process that runs workflows (`rollout upgrade`/`deploy`), false for a short `rollout session` command. */
  runsWorkflows?: boolean;
  /** The Step Functions endpoint of a process that runs workflows, once it serves: where SendTaskSuccess reaches its waiting tasks. */
  stepFunctionsEndpoint?: string;
  startedAt: string;
}

export interface DataDirClaim {
  announce(endpoint: string, tableName: string, runsWorkflows: boolean): Promise<void>;
  /** Adds the Step Functions endpoint to the announcement, once it serves. */
  announceStepFunctions(endpoint: string): Promise<void>;
  release(): Promise<void>;
}

const FILE = 'runtime.json';
const WAITING_FILE = 'runtime.waiting.json';
const POLL_MS = 50;
/** A claim reads as nothing only while its owner writes it: one that stays unreadable this long is damaged. */
const CLAIM_WRITE_GRACE_MS = 2_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Claims the directory, or returns undefined if a live process owns it (a dead owner's claim is removed). */
export async function claimDataDir(dataDir: string): Promise<DataDirClaim | undefined> {
  await mkdir(dataDir, { recursive: true });
  const file = path.join(dataDir, FILE);
  const base: RuntimeAnnouncement = { pid: process.pid, startedAt: new Date().toISOString() };
  for (;;) {
    try {
      await writeFile(file, JSON.stringify(base), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = await readClaim(dataDir);
      if (owner && isAlive(owner.pid)) return undefined;
      // Only a dead owner's file is removed (undefined: it went away meanwhile).
      if (owner) await rm(file, { force: true });
    }
  }
  let announced: RuntimeAnnouncement = base;
  const write = async (announcement: RuntimeAnnouncement) => {
    announced = announcement;
    // Written aside and renamed, so a reader never sees half a file.
    const temporary = `${file}.${process.pid}`;
    await writeFile(temporary, JSON.stringify(announcement));
    await rename(temporary, file);
  };
  return {
    announce: (dynamoDbEndpoint, tableName, runsWorkflows) => write({ ...base, dynamoDbEndpoint, tableName, runsWorkflows }),
    announceStepFunctions: (stepFunctionsEndpoint) => write({ ...announced, stepFunctionsEndpoint }),
    async release() {
      if ((await readAnnouncement(dataDir))?.pid === process.pid) await rm(file, { force: true });
    },
  };
}

/**
 * Claims the directory, waiting up to `timeoutMs` while another live process owns it. While it
 * waits it says so in `runtime.waiting.json`, so that short readers let it in first (see
 * `runWaitingFor`).
 */
export async function claimDataDirWaiting(dataDir: string, timeoutMs: number): Promise<DataDirClaim> {
  const deadline = Date.now() + timeoutMs;
  const waiting = path.join(dataDir, WAITING_FILE);
  let said = false;
  try {
    for (;;) {
      const claim = await claimDataDir(dataDir);
      if (claim) return claim;
      if (Date.now() > deadline) throw new DataDirInUseError(dataDir, (await readAnnouncement(dataDir))?.pid);
      if (!said) await writeFile(waiting, JSON.stringify({ pid: process.pid }));
      said = true;
      await sleep(POLL_MS);
    }
  } finally {
    if (said && (await readWaiting(dataDir)) === process.pid) await rm(waiting, { force: true });
  }
}

/**
 * Whether a live process that runs workflows waits for the directory. A reader that finds no owner
 * would claim the directory for its command; a reader in a loop (`watch rollout session list`, a
 * script polling for a session) then takes it back each time it lets go, and the run starves until
 * it gives up. Readers wait for such a run to come up and reach it instead.
 */
export async function runWaitingFor(dataDir: string): Promise<boolean> {
  const pid = await readWaiting(dataDir);
  return pid !== undefined && isAlive(pid);
}

async function readWaiting(dataDir: string): Promise<number | undefined> {
  try {
    const { pid } = JSON.parse(await readFile(path.join(dataDir, WAITING_FILE), 'utf8')) as { pid?: unknown };
    return Number.isInteger(pid) && (pid as number) > 0 ? (pid as number) : undefined;
  } catch {
    return undefined; // none, or being written
  }
}

/**
 * The announcement of the live owner, once it serves (waiting up to `timeoutMs` while it starts);
 * undefined when no live process owns the directory.
 */
export async function findLiveRuntime(dataDir: string, timeoutMs = 30_000): Promise<RuntimeAnnouncement | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const owner = await readClaim(dataDir);
    if (!owner || !isAlive(owner.pid)) return undefined;
    if (owner.dynamoDbEndpoint) return owner;
    if (Date.now() > deadline) throw new DataDirInUseError(dataDir, owner.pid);
    await sleep(POLL_MS);
  }
}

async function readAnnouncement(dataDir: string): Promise<RuntimeAnnouncement | undefined> {
  const read = await readClaimFile(dataDir);
  return typeof read === 'object' ? read : undefined;
}

/**
 * The claim in runtime.json, undefined when there is none. A claim being written reads as nothing
 * for a moment; one that stays unreadable (garbage, a truncated file) is damaged, and said so
 * rather than waited on for ever.
 */
async function readClaim(dataDir: string): Promise<RuntimeAnnouncement | undefined> {
  const deadline = Date.now() + CLAIM_WRITE_GRACE_MS;
  for (;;) {
    const read = await readClaimFile(dataDir);
    if (read !== 'unreadable') return read;
    if (Date.now() > deadline) {
      const file = path.join(dataDir, FILE);
      throw new DataDirDamagedError(
        dataDir,
        `${FILE} is not a claim a rollout process wrote (no JSON object with a pid)`,
        `if no rollout process uses the directory, remove ${file}`,
      );
    }
    await sleep(POLL_MS);
  }
}

async function readClaimFile(dataDir: string): Promise<RuntimeAnnouncement | 'unreadable' | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(dataDir, FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const claim = JSON.parse(text) as Partial<RuntimeAnnouncement> | null;
    return claim && typeof claim === 'object' && Number.isInteger(claim.pid) && claim.pid! > 0 ? (claim as RuntimeAnnouncement) : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The DynamoDB of a data directory (or of memory, without one), as this process reaches it. */
export interface OpenedDataDir {
  dynamoDb: LocalDynamoDb;
  /** Whether a process that runs workflows holds the directory: this one, or the live owner reached. */
  runsWorkflows: boolean;
  /** The live owner's Step Functions endpoint, when a process that runs workflows announced one. */
  stepFunctionsEndpoint?: string;
  /** An owner: tells other processes its Step Functions endpoint (a no-op without a directory). */
  announceStepFunctions(endpoint: string): Promise<void>;
  /** Closes the clients; an owner also stops the database and then lets go of the directory. */
  close(): Promise<void>;
}

export interface OpenDataDirOptions {
  /** Without it, an in-memory database only this process sees. */
  dataDir?: string;
  /**
   * True for a process that runs workflows: it must own the directory, waiting up to `waitMs` for
   * another owner to let go. False (a `rollout session` command): reach the live owner's endpoint,
   * or own the directory for the command's duration if nobody does.
   */
  runsWorkflows: boolean;
  waitMs?: number;
  /** Port of the DynamoDB endpoint this process serves, when it opens the database (0 or none: any free port). */
  dynamoDbPort?: number;
}

/** How long a run waits for another process (a `rollout session` command, say) to let go of its data directory. */
const DEFAULT_WAIT_MS = 30_000;

/**
 * Opens a data directory in the one way the rules allow: a LevelDB opens in one process only, so
 * the directory is claimed (runtime.json, exclusively) before the database opens, the endpoint is
 * announced once it serves, and other processes reach it through that endpoint.
 */
export async function openDataDir(options: OpenDataDirOptions): Promise<OpenedDataDir> {
  const { dataDir } = options;
  if (!dataDir) {
    const dynamoDb = await startLocalDynamoDb({ ...(options.dynamoDbPort ? { port: options.dynamoDbPort } : {}) });
    return { dynamoDb, runsWorkflows: options.runsWorkflows, announceStepFunctions: async () => undefined, close: () => dynamoDb.close() };
  }
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  for (;;) {
    if (!options.runsWorkflows) {
      const owner = await findLiveRuntime(dataDir, waitMs);
      if (owner?.dynamoDbEndpoint && owner.tableName) {
        const dynamoDb = connectDynamoDb({ endpoint: owner.dynamoDbEndpoint, tableName: owner.tableName });
        return {
          dynamoDb,
          runsWorkflows: owner.runsWorkflows === true,
          ...(owner.stepFunctionsEndpoint ? { stepFunctionsEndpoint: owner.stepFunctionsEndpoint } : {}),
          announceStepFunctions: async () => undefined,
          close: () => dynamoDb.close(),
        };
      }
      if (await runWaitingFor(dataDir)) {
        await sleep(POLL_MS); // a run goes first: reach it once it serves
        continue;
      }
    }
    const claim = options.runsWorkflows ? await claimDataDirWaiting(dataDir, waitMs) : await claimDataDir(dataDir);
    if (!claim) continue; // someone claimed it in between: reach them instead
    let dynamoDb: LocalDynamoDb;
    try {
      dynamoDb = await startLocalDynamoDb({ dataDir, ...(options.dynamoDbPort ? { port: options.dynamoDbPort } : {}) });
    } catch (err) {
      await claim.release();
      throw err;
    }
    await claim.announce(dynamoDb.endpoint, dynamoDb.tableName, options.runsWorkflows);
    return {
      dynamoDb,
      runsWorkflows: options.runsWorkflows,
      announceStepFunctions: (endpoint) => claim.announceStepFunctions(endpoint),
      async close() {
        await dynamoDb.close();
        // Only once the database is closed may another process open it.
        await claim.release();
      },
    };
  }
}
