import type { UpgradeSession } from '../../../core/rolling-upgrade/session';
import type { SessionStore } from '../../../ports/session-store';

/** Plan positions are read in blocks of this many names: the store keeps the plan in chunks of 1,000, one read each. */
const BLOCK = 1000;
/** Sessions whose plans one container keeps (a warm Lambda serves one session at a time; the embedded process a few). */
const SESSIONS_KEPT = 8;

/**
 * The names at plan positions. The plan snapshot never changes once the window runs, so its names
 * are kept per session in this container (a warm Lambda, the embedded process) and read a block at
 * a time on first need: an increment that looks at a few positions reads at most their blocks, once.
 */
export class PlanCache {
  private readonly sessions = new Map<string, Map<number, Promise<string[]>>>();

  constructor(private readonly store: Pick<SessionStore, 'getPlanSlice'>) {}

  /** `{name, index}` of each position (positions past the plan are left out). */
  async at(session: Pick<UpgradeSession, 'upgradeId' | 'nodeCount'>, positions: readonly number[]): Promise<{ name: string; index: number }[]> {
    const blocks = this.blocksOf(session.upgradeId);
    const wanted = [...new Set(positions.filter((p) => p >= 0 && p < session.nodeCount).map((p) => Math.floor(p / BLOCK)))];
    const loaded = new Map(await Promise.all(wanted.map(async (block) => [block, await this.block(blocks, session, block)] as const)));
    return positions.flatMap((index) => {
      const name = loaded.get(Math.floor(index / BLOCK))?.[index % BLOCK];
      return name === undefined ? [] : [{ name, index }];
    });
  }

  /** Every name of the plan (haltOnOutsideFailures tells the plan's nodes from the others). */
  async all(session: Pick<UpgradeSession, 'upgradeId' | 'nodeCount'>): Promise<string[]> {
    return (
      await this.at(
        session,
        Array.from({ length: session.nodeCount }, (_, i) => i),
      )
    ).map((n) => n.name);
  }

  private blocksOf(upgradeId: string): Map<number, Promise<string[]>> {
    let blocks = this.sessions.get(upgradeId);
    if (!blocks) {
      if (this.sessions.size >= SESSIONS_KEPT) this.sessions.delete(this.sessions.keys().next().value!);
      blocks = new Map();
      this.sessions.set(upgradeId, blocks);
    }
    return blocks;
  }

  private block(blocks: Map<number, Promise<string[]>>, session: Pick<UpgradeSession, 'upgradeId' | 'nodeCount'>, block: number): Promise<string[]> {
    let names = blocks.get(block);
    if (!names) {
      names = this.store.getPlanSlice(session.upgradeId, block * BLOCK, Math.min((block + 1) * BLOCK, session.nodeCount));
      // A failed read is not kept: the next increment reads again.
      names.catch(() => blocks.delete(block));
      blocks.set(block, names);
    }
    return names;
  }
}
