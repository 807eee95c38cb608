import { SiteServiceError } from '../../../core/errors';
import { chunkHostlist, compressHostlist, expandHostlist } from '../../../core/site/hostlist';
import { validLabel, validNodeNames } from '../../../core/site/names';
import { readNodeLabels } from '../../../core/site/node-labels';
import type { CommandTransport } from '../../../ports/command-transport';
import { systemClock, type Clock } from '../../../core/clock';
import type { ConnectorRecords } from '../../../ports/connector-state';
import type { Inventory, InventoryNode } from '../../../ports/site';
import { run, runChecked } from './scontrol-workload-manager';
import { shellCommand } from './shell-quote';

export interface SlurmInventoryOptions {
  transport: CommandTransport;
  sinfo?: string;
  scontrol?: string;
  /** The feature key of the nodes' deployment roles: `role` reads `role:controller`, `role:compute`. */
  roleKey?: string;
  /**
   * The members this inventory gave each group it edits (the rollout table: `ConnectorState.records('slurm-inventory')`).
   * Slurm forgets features set with `scontrol update` on `scontrol reconfigure` and on a slurmctld
   * restart without `-R`; with this record the inventory puts them back when it next reads the
   * group. Without it, a group's members are what Slurm shows.
   */
  memberships?: ConnectorRecords<GroupMembership>;
  /** The site's clock, by which a node listing is young enough to reuse; default the system clock. */
  clock?: Clock;
}

/**
 * How long `listNodes` reuses its listing (site clock): a window increment asks for the nodes' racks
 * and gates every poll, and features change rarely. Edits made here drop it; group reads and edits never use it.
 */
const LISTING_REUSE_MS = 30_000;

/** Names per `sinfo --nodes=<hostlist>` of getNodes: as the feature edits' `scontrol update` chunks, a command line's length. */
const GET_NODES_CHUNK = 500;

/** A group the inventory edits: its members as the inventory set them. */
export interface GroupMembership {
  /** The group label (a feature). */
  name: string;
  members: string[];
}

/** `sinfo` prints one line per partition, feature set and state with a compressed hostlist: short even for thousands of nodes. */
const SINFO_FORMAT = '--format=%R %f %N';
export const DEFAULT_ROLE_KEY = 'role';
const DEFAULT_ROLE = 'compute';

interface SlurmView {
  /** Partition → members. */
  partitions: Map<string, Set<string>>;
  /** Node → its available features, in Slurm's order. */
  features: Map<string, string[]>;
}

const natural = new Intl.Collator('en', { numeric: true }).compare;
const add = (label: string) => (features: string[]) => (features.includes(label) ? features : [...features, label]);

/**
 * The inventory a plain Slurm cluster has: its partitions and node features, read with one `sinfo`
 * over the command transport (SSM or local).
 *
 * - A group is a partition or a feature: `getGroupMembers('gpu')` lists the nodes of partition
 *   `gpu`, else the nodes carrying feature `gpu`, in natural name order (x3000c0s2 before x3000c0s10).
 * - Membership edits (the upgrading and failed groups) are feature edits:
 *   `scontrol update NodeName=<hostlist> AvailableFeatures=<list> ActiveFeatures=<list>`, each node
 *   keeping its other features (nodes with the same resulting list share one command). Partitions
 *   are slurm.conf's to change: editing one is refused.
 * - Slurm has no empty feature: a label that no partition or node carries is an empty group, not
 *   GroupNotFoundError (so a mistyped target group yields an empty plan).
 * - listNodes reads the features by core/site/node-labels.ts: `rack:<rack>`, `nid:<n>` (default:
 *   position in name order), and every `role:<role>` feature is one of the node's deployment roles
 *   (task graphs), in feature order, the first its `role` (default `compute`); the role key is
 *   configurable (`roleKey`). Other `key:value` features are labels and every other feature is a tag.
 */
export class SlurmInventory implements Inventory {
  private readonly sinfo: string;
  private readonly scontrol: string;
  private readonly roleKey: string;

  private listed: { at: number; view: SlurmView } | undefined;
  /** Whether the last listing fit in one `sinfo` (undefined: none made yet): getNodes lists again rather than read nodes by hostlist. */
  private listingFits: boolean | undefined;

  constructor(private readonly options: SlurmInventoryOptions) {
    this.sinfo = options.sinfo ?? 'sinfo';
    this.scontrol = options.scontrol ?? 'scontrol';
    this.roleKey = options.roleKey ?? DEFAULT_ROLE_KEY;
  }

  async getGroupMembers(label: string): Promise<string[]> {
    validLabel(label);
    const view = await this.view();
    const shown = this.members(view, label);
    const recorded = view.partitions.has(label) ? undefined : await this.options.memberships?.get(label);
    if (!recorded) return shown;
    // Slurm lost some (reconfigure, restart): put the feature back on those it still knows.
    const lost = recorded.members.filter((name) => view.features.has(name) && !view.features.get(name)!.includes(label));
    if (lost.length > 0) await this.editFeature(label, lost, add(label), view);
    return [...new Set([...shown, ...lost])].sort(natural);
  }

  async addGroupMembers(label: string, names: readonly string[]): Promise<void> {
    await this.record(label, (members) => [...new Set([...members, ...names])]);
    await this.editFeature(label, names, add(label));
  }

  async removeGroupMembers(label: string, names: readonly string[]): Promise<void> {
    await this.record(label, (members) => members.filter((m) => !names.includes(m)));
    await this.editFeature(label, names, (features) => features.filter((f) => f !== label));
  }

  /** The recorded members of a group the inventory edits, changed before Slurm is (so a lost feature can be put back). */
  private async record(label: string, change: (members: string[]) => string[]): Promise<void> {
    const records = this.options.memberships;
    if (!records) return;
    validLabel(label);
    const existing = await records.get(label);
    if (!existing) {
      const created = await records.create({ name: label, members: change([]) });
      if (created.created) return;
      await records.update({ name: label, members: change(created.record.members) });
      return;
    }
    await records.update({ name: label, members: change(existing.members) });
  }

  async listNodes(): Promise<InventoryNode[]> {
    const now = (this.options.clock ?? systemClock).now();
    if (!this.listed || now - this.listed.at < 0 || now - this.listed.at >= LISTING_REUSE_MS) this.listed = { at: now, view: await this.view() };
    const { features } = this.listed.view;
    return [...features.keys()].sort(natural).map((name, i) => toInventoryNode(name, features.get(name)!, i + 1, this.roleKey));
  }

  /**
   * The named nodes: from the listing while it is young enough to reuse; else, where the last listing
   * fit in one `sinfo`, from a new listing (sinfo loads every node from slurmctld whatever `--nodes`
   * says and filters them itself: on slurmctld one listing costs what a read of a few nodes does, and
   * it serves the next reads for LISTING_REUSE_MS); else (a listing taking a command per chunk of
   * nodes, or none made yet) with `sinfo --nodes=<hostlist>` (the workload manager's reader's way),
   * GET_NODES_CHUNK names a command, each halved if its output exceeds the transport's. A name Slurm
   * does not know is absent. A node without a `nid:` feature has its place in name order among every
   * node for a nid, as in listNodes: read then from one more `sinfo --format=%N` (hostlists alone).
   */
  async getNodes(names: readonly string[]): Promise<Map<string, InventoryNode>> {
    const wanted = [...new Set(names)];
    const out = new Map<string, InventoryNode>();
    if (wanted.length === 0) return out;
    validNodeNames(wanted);
    const now = (this.options.clock ?? systemClock).now();
    const fresh = this.listed !== undefined && now - this.listed.at >= 0 && now - this.listed.at < LISTING_REUSE_MS;
    if (fresh || this.listingFits) {
      const known = new Set(wanted);
      for (const node of await this.listNodes()) if (known.has(node.name)) out.set(node.name, node);
      return out;
    }
    const features = new Map<string, string[]>();
    for (let i = 0; i < wanted.length; i += GET_NODES_CHUNK) await this.readFeatures(wanted.slice(i, i + GET_NODES_CHUNK), features);
    const read = [...features].map(([name, list]) => ({ name, list, labels: readNodeLabels(list, { rolesKey: this.roleKey, roleFromRoles: true }) }));
    const positions = read.some((n) => n.labels.nid === undefined) ? await this.positions() : undefined;
    for (const { name, list } of read) out.set(name, toInventoryNode(name, list, positions?.get(name) ?? 0, this.roleKey));
    return out;
  }

  /** Every node's place in name order (from 1), from one `sinfo --format=%N`: what listNodes numbers a node without a `nid:` feature by. */
  private async positions(): Promise<Map<string, number>> {
    const { stdout, script } = await this.sinfoRun('--format=%N');
    if (stdout === undefined) throw new SiteServiceError('inventory', `${script}: the node listing exceeds the transport's output limit`);
    const all = [...new Set(stdout.split('\n').flatMap((line) => (line.trim() === '' ? [] : expandHostlist(line.trim()))))].sort(natural);
    return new Map(all.map((name, i) => [name, i + 1]));
  }

  private members(view: SlurmView, label: string): string[] {
    const partition = view.partitions.get(label);
    if (partition) return [...partition].sort(natural);
    return [...view.features]
      .filter(([, features]) => features.includes(label))
      .map(([name]) => name)
      .sort(natural);
  }

  private async editFeature(label: string, names: readonly string[], change: (features: string[]) => string[], seen?: SlurmView): Promise<void> {
    validLabel(label);
    const wanted = validNodeNames([...new Set(names)]);
    if (wanted.length === 0) return;
    this.listed = undefined;
    const view = seen ?? (await this.view());
    if (view.partitions.has(label))
      throw new SiteServiceError('inventory', `'${label}' is a Slurm partition: its members are set in slurm.conf, not by a rollout`);
    const unknown = wanted.filter((n) => !view.features.has(n));
    if (unknown.length > 0) throw new SiteServiceError('inventory', `Slurm does not know node(s) ${unknown.slice(0, 5).join(', ')}`);
    // Nodes whose features end up the same share one command.
    const byFeatures = new Map<string, string[]>();
    for (const name of wanted) {
      const before = view.features.get(name)!;
      const after = change(before);
      if (after.length === before.length && after.every((f, i) => f === before[i])) continue;
      const key = after.join(',');
      byFeatures.set(key, [...(byFeatures.get(key) ?? []), name]);
    }
    for (const [features, nodes] of byFeatures) {
      for (const hostlist of chunkHostlist(nodes, 500)) {
        const argv = [this.scontrol, 'update', `NodeName=${hostlist}`, `AvailableFeatures=${features}`, `ActiveFeatures=${features}`];
        await runChecked('inventory', this.options.transport, shellCommand(argv));
      }
    }
  }

  /**
   * One `sinfo` when its listing fits the transport's output (SSM keeps 24,000 bytes). sinfo
   * prints a line per distinct feature set, so a site whose nodes each carry their own feature
   * (`nid:<n>`) passes that from a few hundred nodes: then the partitions and their nodes are read
   * first (`%R %N`, a line per partition), and the features in chunks of nodes (`--nodes=<hostlist>`),
   * halved until each fits.
   */
  private async view(): Promise<SlurmView> {
    const whole = await this.sinfoRun(SINFO_FORMAT);
    this.listingFits = whole.stdout !== undefined;
    if (whole.stdout !== undefined) return parseSinfo(whole.stdout, whole.script);
    const listing = await this.sinfoRun('--format=%R %N');
    if (listing.stdout === undefined) throw new SiteServiceError('inventory', `${listing.script}: the partition listing exceeds the transport's output limit`);
    const partitions = new Map<string, Set<string>>();
    for (const line of listing.stdout.split('\n')) {
      const words = line.trim().split(/\s+/);
      if (words.length !== 2) continue;
      partitions.set(words[0]!, new Set([...(partitions.get(words[0]!) ?? []), ...expandHostlist(words[1]!)]));
    }
    const features = new Map<string, string[]>();
    const all = [...new Set([...partitions.values()].flatMap((p) => [...p]))].sort(natural);
    // All of them did not fit: start with halves.
    const half = Math.ceil(all.length / 2);
    for (const chunk of [all.slice(0, half), all.slice(half)]) if (chunk.length > 0) await this.readFeatures(chunk, features);
    return { partitions, features };
  }

  private async readFeatures(names: readonly string[], into: Map<string, string[]>): Promise<void> {
    const { stdout, script } = await this.sinfoRun(SINFO_FORMAT, compressHostlist(names));
    if (stdout === undefined) {
      if (names.length === 1) throw new SiteServiceError('inventory', `${script}: the features of one node exceed the transport's output limit`);
      const half = Math.ceil(names.length / 2);
      await this.readFeatures(names.slice(0, half), into);
      await this.readFeatures(names.slice(half), into);
      return;
    }
    for (const [name, list] of parseSinfo(stdout, script).features) into.set(name, list);
  }

  /** `sinfo --noheader [--nodes=<hostlist>] <format>`: its stdout, undefined when the transport cut it short. */
  private async sinfoRun(format: string, nodes?: string): Promise<{ stdout: string | undefined; script: string }> {
    const script = shellCommand([this.sinfo, '--noheader', ...(nodes !== undefined ? [`--nodes=${nodes}`] : []), format]);
    const result = await run('inventory', this.options.transport, script);
    if (result.exitCode !== 0)
      throw new SiteServiceError('inventory', `${script} exited ${result.exitCode}: ${result.stderr.trim().slice(0, 500) || 'no stderr'}`);
    return { stdout: result.stdoutTruncated ? undefined : result.stdout, script };
  }
}

/** Lines `<partition> <features|(null)> <hostlist>`. */
export function parseSinfo(stdout: string, script = 'sinfo'): SlurmView {
  const partitions = new Map<string, Set<string>>();
  const features = new Map<string, string[]>();
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    const words = line.trim().split(/\s+/);
    if (words.length !== 3) throw new SiteServiceError('inventory', `${script} printed an unexpected line: ${JSON.stringify(line.slice(0, 200))}`);
    const [partition, list, hostlist] = words as [string, string, string];
    const names = expandHostlist(hostlist);
    const nodeFeatures = list === '(null)' ? [] : list.split(',').filter(Boolean);
    const members = partitions.get(partition) ?? new Set<string>();
    partitions.set(partition, members);
    for (const name of names) {
      members.add(name);
      features.set(name, nodeFeatures);
    }
  }
  return { partitions, features };
}

function toInventoryNode(name: string, features: readonly string[], position: number, roleKey: string): InventoryNode {
  const { rack, role, nid, roles, labels, tags } = readNodeLabels(features, { rolesKey: roleKey, roleFromRoles: true });
  return {
    name,
    nid: nid ?? position,
    ...(rack !== undefined ? { rack } : {}),
    role: role ?? DEFAULT_ROLE,
    tags,
    labels,
    ...(roles.length > 0 ? { roles } : {}),
  };
}
