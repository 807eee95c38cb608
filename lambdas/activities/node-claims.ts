import type { NodeLock, NodeLockStore } from '../../ports/node-locks';
import type { RunMessages } from '../../ports/run-messages';
import type { WorkloadManager } from '../../ports/site';
import { foreignClaims } from './site-claims';

/**
 * The one lock discipline every workflow follows before it changes nodes (rolling upgrades,
 * group deployment batches, task runs; environment upgrades through their rolling upgrades): take
 * the nodes' locks (ports/node-locks.ts: lease, heartbeat, fencing token), all or none where a unit of
 * work needs all its nodes, keep the tokens, renew them while working, give them back when done.
 */

export interface TakenLocks {
  /** Each node locked now, with the fencing token of this acquisition. */
  locked: Map<string, number>;
  /** Nodes another run of this store holds under a live lease, with that run: they wait. */
  heldByOthers: Map<string, string>;
}

/**
 * Takes the locks of `nodes` for `owner`. All or none: when another run holds any, the ones taken are
 * given back at once (so two runs never deadlock). Each on its own otherwise. A lock taken, then taken
 * over before it could be read back (a stall past the lease), counts as held by the other.
 */
export async function takeLocks(
  locks: NodeLockStore,
  owner: string,
  nodes: readonly string[],
  leaseSeconds: number,
  mode: 'all-or-none' | 'each',
): Promise<TakenLocks> {
  const unique = [...new Set(nodes)];
  if (unique.length === 0) return { locked: new Map(), heldByOthers: new Map() };
  const heldByOthers = await locks.tryLockNodes(owner, unique, leaseSeconds);
  const taken = unique.filter((node) => !heldByOthers.has(node));
  if (mode === 'all-or-none' && heldByOthers.size > 0) {
    await locks.releaseNodeLocks(owner, taken);
    return { locked: new Map(), heldByOthers };
  }
  const read: Map<string, NodeLock> = taken.length > 0 ? await locks.getNodeLocks(taken) : new Map();
  const locked = new Map<string, number>();
  for (const node of taken) {
    const lock = read.get(node);
    if (lock?.owner === owner) locked.set(node, lock.fencingToken);
    else heldByOthers.set(node, lock?.owner ?? 'unknown');
  }
  if (mode === 'all-or-none' && heldByOthers.size > 0) {
    await locks.releaseNodeLocks(owner, [...locked.keys()]);
    return { locked: new Map(), heldByOthers };
  }
  return { locked, heldByOthers };
}

/**
 * Of the nodes just locked, those the site shows claimed by another control plane's run (their
 * Slurm reason names a run this store does not know): their locks go back, and they are left alone.
 * Nodes the workload manager does not know carry no claim.
 */
export async function refuseClaimedElsewhere(
  deps: { locks: NodeLockStore; workloadManager: Pick<WorkloadManager, 'getNodes'> },
  owner: string,
  nodes: readonly string[],
): Promise<Map<string, string>> {
  if (nodes.length === 0) return new Map();
  const claimed = await foreignClaims(deps.locks, owner, await deps.workloadManager.getNodes(nodes));
  if (claimed.size > 0) await deps.locks.releaseNodeLocks(owner, [...claimed.keys()]);
  return claimed;
}

/** A message said once: not appended again while it is the newest (a wait, a fault that lasts). */
export async function sayOnce(messages: RunMessages, id: string, message: string): Promise<void> {
  if ((await messages.latest(id)) !== message) await messages.append(id, message);
}

/**
 * The heartbeat's rule, for every workflow's locks: renew a quarter lease after the last renewal (`renewedAt`;
 * never renewed: now), not at every pass. Skipping a renewal while the lease is fresh keeps the check before acting:
 * a lock is taken over only once its lease has run out (tryLockNodes), so locks renewed (or taken) at `renewedAt`
 * are still this run's until `renewedAt` + the lease; acting before a quarter of it has gone leaves three quarters
 * (three poll intervals at least, the lease being four or more) for the site call to end and for the clocks of the
 * Lambda and the store to differ. A run that stalled past its lease finds the renewal due at its next pass, and
 * with it the locks it lost, before it acts.
 */
export function heartbeatDue(renewedAt: number | undefined, now: number, leaseSeconds: number): boolean {
  return now - (renewedAt ?? -Infinity) >= (leaseSeconds * 1000) / 4;
}

/** Renews the leases of the nodes held (node → token) in bounded parallel: the heartbeat. Returns those lost, with their holder now. */
export async function renewHeld(
  locks: NodeLockStore,
  owner: string,
  held: ReadonlyMap<string, number>,
  leaseSeconds: number,
): Promise<Map<string, string | undefined>> {
  if (held.size === 0) return new Map();
  const lost = await locks.renewNodeLocks(owner, held, leaseSeconds);
  return new Map([...lost].map(([node, lock]) => [node, lock?.owner === owner ? undefined : lock?.owner]));
}
