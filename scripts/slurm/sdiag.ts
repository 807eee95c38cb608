import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** slurmctld's RPC counters as `sdiag` prints them: the load a client puts on the controller. */
export interface SdiagCounts {
  /** Message type (e.g. `REQUEST_NODE_INFO`) → RPCs served since `since`. */
  byType: Record<string, number>;
  /** User name → RPCs served since `since`. */
  byUser: Record<string, number>;
  /** Every RPC by type, summed. */
  total: number;
  /** When the counters started (slurmctld's start or the last `sdiag -r`), epoch seconds. */
  since: number;
}

/**
 * Parses `sdiag`'s text (every Slurm release prints it; `sdiag --json` is 23.02+ only):
 *
 *   Data since      Thu Nov 26 19:47:05 2026 (1795722425)
 *   Remote Procedure Call statistics by message type
 *   	REQUEST_PARTITION_INFO                  ( 2009) count:51     ave_time:1689   total_time:86148
 *   Remote Procedure Call statistics by user
 *   	root            (       0) count:113    ave_time:1614   total_time:182428
 */
export function parseSdiag(text: string): SdiagCounts {
  const since = /^Data since\s.*\((\d+)\)\s*$/m.exec(text);
  if (!since) throw new Error(`not sdiag output (no 'Data since' line): ${text.slice(0, 200)}`);
  const byType: Record<string, number> = {};
  const byUser: Record<string, number> = {};
  let section: Record<string, number> | undefined;
  for (const line of text.split('\n')) {
    if (/^Remote Procedure Call statistics by message type/.test(line)) section = byType;
    else if (/^Remote Procedure Call statistics by user/.test(line)) section = byUser;
    else if (/^\S/.test(line)) section = undefined;
    else if (section) {
      const row = /^\s+(\S+)\s+\(\s*\d+\)\s+count:(\d+)/.exec(line);
      if (row) section[row[1]!] = Number(row[2]);
    }
  }
  const total = Object.values(byType).reduce((sum, n) => sum + n, 0);
  return { byType, byUser, total, since: Number(since[1]) };
}

/** What happened between two readings: per type (types with no new RPCs left out) and in total. */
export function sdiagDelta(before: SdiagCounts, after: SdiagCounts): { byType: Record<string, number>; total: number } {
  if (after.since !== before.since) throw new Error('the sdiag counters were reset between the two readings');
  const byType: Record<string, number> = {};
  for (const [type, count] of Object.entries(after.byType)) {
    const delta = count - (before.byType[type] ?? 0);
    if (delta > 0) byType[type] = delta;
  }
  return { byType, total: after.total - before.total };
}

/** `sdiag` of the cluster `env.SLURM_CONF` names, parsed. */
export async function readSdiag(env: NodeJS.ProcessEnv): Promise<SdiagCounts> {
  const { stdout } = await run('sdiag', [], { env, timeout: 30_000 });
  return parseSdiag(stdout);
}

/** `sdiag -r`: zeroes the counters (needs SlurmUser or root). The reset's own RPC is counted afterwards: read before you act. */
export async function resetSdiag(env: NodeJS.ProcessEnv): Promise<void> {
  await run('sdiag', ['-r'], { env, timeout: 30_000 });
}

/** The RPC the `before` reading of rpcsDuring() itself sent, counted in the `after` one. */
const READING_RPC = 'REQUEST_STATS_INFO';

/**
 * The slurmctld RPCs `work` caused, by type: sdiag read before and after (the counters are never
 * reset, so other measurements and other readers of the same cluster are not disturbed); the
 * `before` reading's own REQUEST_STATS_INFO is taken out. Only what reaches this cluster's
 * slurmctld counts, from every client: measure on a cluster nothing else uses meanwhile.
 */
export async function rpcsDuring<T>(env: NodeJS.ProcessEnv, work: () => Promise<T>): Promise<{ result: T; byType: Record<string, number>; total: number }> {
  const before = await readSdiag(env);
  const result = await work();
  const after = await readSdiag(env);
  const { byType, total } = sdiagDelta(before, after);
  if ((byType[READING_RPC] ?? 0) > 0) {
    byType[READING_RPC]! -= 1;
    if (byType[READING_RPC] === 0) delete byType[READING_RPC];
  }
  return { result, byType, total: total - 1 };
}
