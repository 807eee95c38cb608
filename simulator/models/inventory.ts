import type { InventoryNode } from '../../ports/site';
import type { SiteDefinition } from '../site-file';
import { SimRequestError } from '../errors';

/** A node as the inventory serves it: the port's shape, so the simulator and the connector agree. */
export type InventoryNodeRecord = InventoryNode;

export interface GroupRecord {
  label: string;
  description: string;
  tags: string[];
  /** HSM's exclusive group: a node is in at most one group of it. */
  exclusiveGroup?: string;
  members: string[];
}

interface Group {
  label: string;
  description: string;
  tags: string[];
  exclusiveGroup?: string;
  /** A Set keeps insertion order and removes in O(1): group order survives thousands of edits. */
  members: Set<string>;
}

/** HSM: the site's nodes and its labelled groups with ordered members. Time plays no part here. */
export class InventoryModel {
  private readonly nodes = new Map<string, InventoryNodeRecord>();
  private readonly groups = new Map<string, Group>();

  constructor(site: Pick<SiteDefinition, 'nodes' | 'groups'> & Partial<Pick<SiteDefinition, 'exclusiveGroups'>>) {
    for (const { name, nid, rack, role, roles, tags, labels, alive, available } of site.nodes) {
      this.nodes.set(name, { name, nid, rack, role, roles, tags, labels, alive, available });
    }
    const exclusiveOf = new Map(Object.entries(site.exclusiveGroups ?? {}).flatMap(([exclusive, labels]) => labels.map((l) => [l, exclusive] as const)));
    for (const [label, members] of Object.entries(site.groups)) {
      const exclusiveGroup = exclusiveOf.get(label);
      this.groups.set(label, { label, description: '', tags: [], ...(exclusiveGroup ? { exclusiveGroup } : {}), members: new Set(members) });
    }
  }

  hasNode(name: string): boolean {
    return this.nodes.has(name);
  }

  /** One node by name; undefined when the site has none of that name. */
  getNode(name: string): InventoryNodeRecord | undefined {
    return this.nodes.get(name);
  }

  listNodes(): InventoryNodeRecord[] {
    return [...this.nodes.values()];
  }

  /** OpenCrowbar's gates changed while the site runs (an operator marks a node unavailable mid-run, or it dies). */
  setGates(name: string, gates: { alive?: boolean | undefined; available?: boolean | undefined }): InventoryNodeRecord {
    this.requireNode(name);
    const node = {
      ...this.nodes.get(name)!,
      ...(gates.alive !== undefined ? { alive: gates.alive } : {}),
      ...(gates.available !== undefined ? { available: gates.available } : {}),
    };
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

  createGroup(label: string, members: readonly string[] = [], description = '', tags: readonly string[] = [], exclusiveGroup?: string): GroupRecord {
    if (this.groups.has(label)) throw new SimRequestError(409, `operation would conflict with an existing group that has the same label.`);
    for (const id of members) this.requireNode(id);
    if (exclusiveGroup) for (const id of members) this.requireOutsideExclusive(exclusiveGroup, label, id);
    const group = { label, description, tags: [...tags], ...(exclusiveGroup ? { exclusiveGroup } : {}), members: new Set(members) };
    this.groups.set(label, group);
    return toRecord(group);
  }

  deleteGroup(label: string): void {
    this.require(label);
    this.groups.delete(label);
  }

  /** The groups a node is a member of (HSM's `GET /memberships/{xname}` groupLabels). */
  groupsOf(id: string): string[] {
    return [...this.groups.values()].filter((g) => g.members.has(id)).map((g) => g.label);
  }

  /**
   * As SMD's AddGroupMember (Cray-HPE/hms-smd cmd/smd/smd-api.go doGroupMembersPost): 409 when the
   * node is a member already (ErrHMSDSDuplicateKey) and when it is in another group of the group's
   * exclusive group (ErrHMSDSExclusiveGroup); neither message names a group.
   */
  addMember(label: string, id: string): void {
    const group = this.require(label);
    this.requireNode(id);
    if (group.members.has(id)) throw new SimRequestError(409, 'operation would conflict with an existing member in the same group.');
    if (group.exclusiveGroup) this.requireOutsideExclusive(group.exclusiveGroup, label, id);
    group.members.add(id);
  }

  private requireOutsideExclusive(exclusiveGroup: string, label: string, id: string): void {
    for (const other of this.groups.values()) {
      if (other.label !== label && other.exclusiveGroup === exclusiveGroup && other.members.has(id)) {
        throw new SimRequestError(409, 'operation would conflict with an existing member in another exclusive group.');
      }
    }
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
  return {
    label: group.label,
    description: group.description,
    tags: group.tags,
    ...(group.exclusiveGroup ? { exclusiveGroup: group.exclusiveGroup } : {}),
    members: [...group.members],
  };
}
