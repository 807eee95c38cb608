import type { InventoryNode } from '../../ports/site';
import type { SiteDefinition } from '../site-file';
import { SimRequestError } from '../errors';

/** A node as the inventory serves it: the port's shape, so the simulator and the connector agree. */
export type InventoryNodeRecord = InventoryNode;

export interface GroupRecord {
  label: string;
  description: string;
  tags: string[];
  members: string[];
}

interface Group {
  label: string;
  description: string;
  tags: string[];
  /** A Set keeps insertion order and removes in O(1): group order survives thousands of edits. */
  members: Set<string>;
}

/** HSM: the site's nodes and its labelled groups with ordered members. Time plays no part here. */
export class InventoryModel {
  private readonly nodes = new Map<string, InventoryNodeRecord>();
  private readonly groups = new Map<string, Group>();

  constructor(site: Pick<SiteDefinition, 'nodes' | 'groups'>) {
    for (const { name, nid, rack, role, roles, tags, labels, alive, available } of site.nodes) {
      this.nodes.set(name, { name, nid, rack, role, roles, tags, labels, alive, available });
    }
    for (const [label, members] of Object.entries(site.groups)) this.groups.set(label, { label, description: '', tags: [], members: new Set(members) });
  }

  hasNode(name: string): boolean {
    return this.nodes.has(name);
  }

  listNodes(): InventoryNodeRecord[] {
    return [...this.nodes.values()];
  }

  /** OpenCrowbar's gates changed while the site runs (an operator marks a node unavailable mid-run, or it dies). */
  setGates(name: string, gates: { alive?: boolean | undefined; available?: boolean | undefined }): InventoryNodeRecord {
    this.requireNode(name);
    const node = { ...this.nodes.get(name)!, ...(gates.alive !== undefined ? { alive: gates.alive } : {}), ...(gates.available !== undefined ? { available: gates.available } : {}) };
    this.nodes.set(name, node);
    return node;
  }

  hasGroup(label: string): boolean {
    return this.groups.has(label);
  }

  listGroups(): GroupRecord[] {
    return Array.from(this.groups.values(), toRecord);
  }

  getGroup(label: string): GroupRecord {
    return toRecord(this.require(label));
  }

  createGroup(label: string, members: readonly string[] = [], description = '', tags: readonly string[] = []): GroupRecord {
    if (this.groups.has(label)) throw new SimRequestError(409, `group '${label}' already exists`);
    for (const id of members) this.requireNode(id);
    const group = { label, description, tags: [...tags], members: new Set(members) };
    this.groups.set(label, group);
    return toRecord(group);
  }

  deleteGroup(label: string): void {
    this.require(label);
    this.groups.delete(label);
  }

  addMember(label: string, id: string): void {
    const group = this.require(label);
    this.requireNode(id);
    if (group.members.has(id)) throw new SimRequestError(409, `'${id}' is already a member of group '${label}'`);
    group.members.add(id);
  }

  removeMember(label: string, id: string): void {
    const group = this.require(label);
    if (!group.members.delete(id)) throw new SimRequestError(404, `'${id}' is not a member of group '${label}'`);
  }

  private require(label: string): Group {
    const group = this.groups.get(label);
    if (!group) throw new SimRequestError(404, `no group with label '${label}'`);
    return group;
  }

  private requireNode(id: string): void {
    if (!this.nodes.has(id)) throw new SimRequestError(400, `'${id}' is not a node of the site`);
  }
}

function toRecord(group: Group): GroupRecord {
  return { label: group.label, description: group.description, tags: group.tags, members: [...group.members] };
}
