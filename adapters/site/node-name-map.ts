/**
 * One node, two names, at the site's edge: the session names every node by the inventory's name
 * (HSM's xname on CSM), and this layer gives the workload manager its own (Slurm's `nid000006`),
 * derived from the inventory's nid by the profile's pattern. The map is never carried in workflow
 * payloads: it is read from the inventory (HSM: one `State/Components?nidonly=true` listing) once
 * per container, and again when a name is not in it (a node added since), at most once a minute.
 */

import { UnknownNodesError } from '../../core/errors';
import { nidName, nidOfName, parseNidNamePattern, type NidNamePattern } from '../../core/site/node-names';
import type { Inventory, NodeNameMap, SiteTriggers, WlmNode, WorkloadManager } from '../../ports/site';

/** The inventory's nids: `listNids` where the inventory has a cheap listing (HSM), else its node listing. */
async function inventoryNids(inventory: Inventory): Promise<Map<string, number>> {
  if (inventory.listNids) return inventory.listNids();
  return new Map((await inventory.listNodes()).map((n) => [n.name, n.nid]));
}

const REFRESH_MS = 60_000;

/** The map derived from the inventory's nids by a pattern such as `nid{nid:06}`. */
export class NidNameMap implements NodeNameMap {
  private readonly pattern: NidNamePattern;
  private byName = new Map<string, string>();
  private byWlmName = new Map<string, string>();
  private loadedAt = -Infinity;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly inventory: Inventory,
    pattern: string,
    private readonly now: () => number = Date.now,
  ) {
    const parsed = parseNidNamePattern(pattern);
    if (typeof parsed === 'string') throw new Error(`node name pattern ${JSON.stringify(pattern)}: ${parsed}`);
    this.pattern = parsed;
  }

  async toWorkloadManager(names: readonly string[]): Promise<Map<string, string>> {
    return this.lookUp(names, () => this.byName);
  }

  async toInventory(wlmNames: readonly string[]): Promise<Map<string, string>> {
    // A name off the pattern can never be in the map: no reload for it.
    const candidates = wlmNames.filter((n) => nidOfName(this.pattern, n) !== undefined);
    return this.lookUp(candidates, () => this.byWlmName);
  }

  private async lookUp(names: readonly string[], table: () => Map<string, string>): Promise<Map<string, string>> {
    if (this.loadedAt === -Infinity || (names.some((n) => !table().has(n)) && this.now() - this.loadedAt >= REFRESH_MS)) await this.load();
    const out = new Map<string, string>();
    for (const name of names) {
      const other = table().get(name);
      if (other !== undefined) out.set(name, other);
    }
    return out;
  }

  private load(): Promise<void> {
    this.loading ??= inventoryNids(this.inventory)
      .then((nids) => {
        const byName = new Map<string, string>();
        const byWlmName = new Map<string, string>();
        for (const [name, nid] of nids) {
          const wlmName = nidName(this.pattern, nid);
          byName.set(name, wlmName);
          byWlmName.set(wlmName, name);
        }
        this.byName = byName;
        this.byWlmName = byWlmName;
        this.loadedAt = this.now();
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}

/**
 * The workload manager as the session sees it: by the inventory's names. Each call maps the names
 * given to Slurm's, calls the connector, and maps what it answers back; a name the inventory does
 * not know reaches no Slurm call (getNodes leaves it out, as Slurm does a name it does not know; a
 * change names it in UnknownNodesError).
 */
export class NameMappedWorkloadManager implements WorkloadManager {
  readonly getJobEnds?: (names: readonly string[]) => Promise<Map<string, number>>;
  /** The inner connector's triggers, set on Slurm's names (a firing's hostlist is in Slurm's names too). */
  readonly triggers?: SiteTriggers;

  constructor(
    private readonly inner: WorkloadManager,
    readonly names: NodeNameMap,
  ) {
    if (inner.triggers) this.triggers = this.mappedTriggers(inner.triggers);
    if (inner.getJobEnds) {
      const getJobEnds = inner.getJobEnds.bind(inner);
      this.getJobEnds = async (names) => {
        const map = await this.names.toWorkloadManager(names);
        return this.back(map, await getJobEnds([...map.values()]));
      };
    }
  }

  async getNodes(names: readonly string[]): Promise<Map<string, WlmNode>> {
    const map = await this.names.toWorkloadManager(names);
    if (map.size === 0) return new Map();
    const answered = await this.inner.getNodes([...map.values()]);
    const out = new Map<string, WlmNode>();
    for (const [name, wlmName] of map) {
      const node = answered.get(wlmName);
      if (node) out.set(name, { ...node, name });
    }
    return out;
  }

  async drain(name: string, reason: string): Promise<void> {
    return this.inner.drain(await this.one(name), reason);
  }

  async resume(name: string, reason?: string): Promise<void> {
    return this.inner.resume(await this.one(name), reason);
  }

  async fail(name: string, reason: string): Promise<void> {
    return this.inner.fail(await this.one(name), reason);
  }

  async drainNodes(names: readonly string[], reason: string): Promise<void> {
    return this.inner.drainNodes(await this.all(names), reason);
  }

  async resumeNodes(names: readonly string[]): Promise<void> {
    return this.inner.resumeNodes(await this.all(names));
  }

  async failNodes(names: readonly string[], reason: string): Promise<void> {
    return this.inner.failNodes(await this.all(names), reason);
  }

  async clearReasons(names: readonly string[]): Promise<void> {
    return this.inner.clearReasons(await this.all(names));
  }

  private async one(name: string): Promise<string> {
    const [wlmName] = await this.all([name]);
    return wlmName!;
  }

  /** Slurm's names of every node given, in order; UnknownNodesError naming those the inventory has no nid for. */
  /** `triggers` (set on Slurm's names) armed with the inventory's: a connector's own, or one given to this site later. */
  mappedTriggers(triggers: SiteTriggers): SiteTriggers {
    return {
      relay: triggers.relay,
      ...(triggers.backstopSeconds !== undefined ? { backstopSeconds: triggers.backstopSeconds } : {}),
      arm: async (session, nodes, kinds) => triggers.arm(session, await this.all(nodes), kinds),
      disarm: (session) => triggers.disarm(session),
    };
  }

  private async all(names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const map = await this.names.toWorkloadManager(names);
    const unknown = names.filter((n) => !map.has(n));
    if (unknown.length > 0) throw new UnknownNodesError('inventory', unknown);
    return names.map((n) => map.get(n)!);
  }

  private back<T>(map: ReadonlyMap<string, string>, answered: ReadonlyMap<string, T>): Map<string, T> {
    const out = new Map<string, T>();
    for (const [name, wlmName] of map) if (answered.has(wlmName)) out.set(name, answered.get(wlmName)!);
    return out;
  }
}
