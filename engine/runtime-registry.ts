import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * A running `rollout` process announces its DynamoDB endpoint in its data directory: an on-disk
 * LevelDB opens in one process only, so a second process (`rollout session cancel`) reaches the
 * sessions through the first one's endpoint.
 */
export interface RuntimeAnnouncement {
  pid: number;
  dynamoDbEndpoint: string;
  tableName: string;
  startedAt: string;
}

const FILE = 'runtime.json';

export async function announceRuntime(dataDir: string, announcement: RuntimeAnnouncement): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true });
  const file = path.join(dataDir, FILE);
  await writeFile(file, JSON.stringify(announcement, null, 2));
  return async () => {
    const current = await readAnnouncement(dataDir);
    if (current?.pid === announcement.pid) await rm(file, { force: true });
  };
}

/** The announcement of a process that is still alive, if any (a stale file is removed). */
export async function findLiveRuntime(dataDir: string): Promise<RuntimeAnnouncement | undefined> {
  const announcement = await readAnnouncement(dataDir);
  if (!announcement) return undefined;
  if (isAlive(announcement.pid)) return announcement;
  await rm(path.join(dataDir, FILE), { force: true });
  return undefined;
}

async function readAnnouncement(dataDir: string): Promise<RuntimeAnnouncement | undefined> {
  try {
    return JSON.parse(await readFile(path.join(dataDir, FILE), 'utf8')) as RuntimeAnnouncement;
  } catch {
    return undefined;
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
