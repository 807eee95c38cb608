import { claimantOf } from '../../core/site/node-claims';
import type { WlmNode } from '../../core/site/site-nodes';
import type { NodeLockStore } from '../../ports/node-locks';

/**
 * The nodes among `wlm` that the site shows claimed (a drain whose Slurm reason names a run,
 * core/site/node-claims.ts) by a run other than `self` that this store does not know: another
 * control plane's. A claim by a run of this store is not one of them: the store's locks decide
 * between its own runs. One BatchGetItem, and only when some claim names another run.
 */
export async function foreignClaims(
  locks: Pick<NodeLockStore, 'knownRuns'>,
  self: string,
  wlm: ReadonlyMap<string, WlmNode>,
  nodes: Iterable<string> = wlm.keys(),
): Promise<Map<string, string>> {
  const others = new Map<string, string>();
  for (const node of nodes) {
    const claimant = siteClaimant(wlm.get(node));
    if (claimant !== undefined && claimant !== self) others.set(node, claimant);
  }
  if (others.size === 0) return others;
  const known = await locks.knownRuns([...others.values()]);
  return new Map([...others].filter(([, run]) => !known.has(run)));
}

/**
 * The run a node's Slurm state says is at work on it: our reason on a drained node, or on one Slurm
 * set DOWN while it was claimed. A reason left on a node in service claims nothing: RESUME keeps a
 * busy node's reason from 23.02 (node_mgr.c update_node), so a run that lifted its drain (a
 * cancelled session's) leaves its words behind, not its claim (as isOurDrain reads it).
 */
function siteClaimant(node: WlmNode | undefined): string | undefined {
  if (node === undefined || !(node.flags.includes('DRAIN') || node.base === 'DOWN')) return undefined;
  return claimantOf(node.reason);
}
