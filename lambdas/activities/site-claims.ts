import { claimantOf } from '../../core/site/node-claims';
import type { WlmNode } from '../../core/site/site-nodes';
import type { NodeLockStore } from '../../ports/node-locks';

/**
 * The nodes among `wlm` that the site shows claimed (a drain whose Slurm reason names a run,
 * core/site/node-claims.ts) by a run other than `self` that this store does not know: another
 * control plane's. A claim by a run of this store is not one of them: the store's locks decide
 * between its own runs. One BatchGetItem, and only when some claim names another run.
 */
export async function foreignClaims(locks: Pick<NodeLockStore, 'knownRuns'>, self: string, wlm: ReadonlyMap<string, WlmNode>, nodes: Iterable<string> = wlm.keys()): Promise<Map<string, string>> {
  const others = new Map<string, string>();
  for (const node of nodes) {
    const claimant = claimantOf(wlm.get(node)?.reason);
    if (claimant !== undefined && claimant !== self) others.set(node, claimant);
  }
  if (others.size === 0) return others;
  const known = await locks.knownRuns([...others.values()]);
  return new Map([...others].filter(([, run]) => !known.has(run)));
}
