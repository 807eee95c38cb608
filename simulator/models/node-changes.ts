import { parseSiteMark, runIdInName } from '../../core/site/node-claims';

import type { NodeChange } from '../../core/site/site-state';

export type { NodeChange, NodeChangeKind } from '../../core/site/site-state';

/**
 * Every change the site saw, in order, with the run that made it as the site itself shows it
 * (core/site/node-claims.ts): what a judge of "no node touched by two runs at once" reads.
 */
export class NodeChangeLog {
  private readonly changes: NodeChange[] = [];

  /** A drain, fail, resume or reason alone: the run its Slurm reason names; a resume or reason that names none lifts the claim it finds (`before`). */
  byReason(at: number, node: string, change: 'drain' | 'resume' | 'fail' | 'reason', reason: string | undefined, before?: string): void {
    const lifted = change === 'resume' || change === 'reason' ? parseSiteMark(before)?.runId : undefined;
    this.push({ at, node, change, by: parseSiteMark(reason)?.runId ?? lifted });
  }

  /** A boot or a provisioner action: the run its session or action name names. */
  byName(at: number, node: string, change: 'boot' | 'prepare' | 'deploy', name: string): void {
    this.push({ at, node, change, by: runIdInName(name) });
  }

  /** A boot by `scontrol reboot`: the run the node's Slurm reason names as the reboot is issued. */
  byNodeReason(at: number, node: string, change: 'boot', reason: string | undefined): void {
    this.push({ at, node, change, by: parseSiteMark(reason)?.runId });
  }

  entries(): NodeChange[] {
    return this.changes.map((change) => ({ ...change }));
  }

  private push(change: NodeChange): void {
    this.changes.push(change.by === undefined ? { at: change.at, node: change.node, change: change.change } : change);
  }
}
