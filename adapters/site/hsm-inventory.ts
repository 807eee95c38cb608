import pLimit from 'p-limit';
import { z } from 'zod';
import { GroupNotFoundError, SiteServiceError } from '../../core/errors';
import { shortList } from '../../core/text';
import type { Inventory, InventoryNode } from '../../ports/site';
import { validLabel, validNodeNames } from '../../core/site/names';
import { readNodeLabels } from '../../core/site/node-labels';
import type { Token } from './secret-token';
import { HttpJsonClient, urlPath } from './http-json-client';

export interface HsmOptions {
  baseUrl: string;
  bearerToken?: Token;
  timeoutMs?: number;
}

const CONCURRENCY = 16;

const groupResponse = z.object({ label: z.string(), members: z.object({ ids: z.array(z.string()) }) });
const groupsResponse = z.array(z.object({ label: z.string() }));

/** Component.1.0.0_Component (hms-smd api/swagger_v2.yaml), the fields a node is described by. */
const componentsResponse = z.object({
  Components: z.array(
    z.object({
      ID: z.string(),
      Type: z.string().nullish(),
      State: z.string().nullish(),
      Enabled: z.boolean().nullish(),
      Role: z.string().nullish(),
      SubRole: z.string().nullish(),
      NID: z.number().nullish(),
    }),
  ),
});
/** Membership.1.0.0: a component's group labels and partition. */
const membershipsResponse = z.array(z.object({ id: z.string(), groupLabels: z.array(z.string()).nullish(), partitionName: z.string().nullish() }));

/** SMD states in which a node answers management (powered, booting or booted). */
const ALIVE_STATES = new Set(['Ready', 'On']);
/** An xname's cabinet: `x3000` of `x3000c0s1b0n0`. */
const CABINET = /^(x\d+)c\d/;
const DEFAULT_ROLE = 'Compute';

/**
 * HSM v2 groups. Member edits are idempotent: adding a member twice or removing an absent one is
 * done, not an error. HSM answers 404 both for a missing group and a missing member, so a 404
 * on removal is settled by reading the group.
 */
export class HsmInventory implements Inventory {
  private readonly http: HttpJsonClient;

  constructor({ baseUrl, bearerToken, timeoutMs }: HsmOptions) {
    this.http = new HttpJsonClient({ service: 'inventory', baseUrl, bearerToken, timeoutMs });
  }

  async getGroupMembers(label: string): Promise<string[]> {
    validLabel(label, 'label');
    const response = await this.http.request('GET', urlPath`/hsm/v2/groups/${label}`, { accept: [404] });
    if (response.status === 404) throw new GroupNotFoundError(label);
    return this.http.parse(groupResponse, response).members.ids;
  }

  async addGroupMembers(label: string, names: readonly string[]): Promise<void> {
    validNodeNames(names);
    const present = new Set(await this.getGroupMembers(label));
    const missing = [...new Set(names)].filter((n) => !present.has(n));
    const statuses = await this.eachLimited(missing, (id) =>
      this.http.request('POST', urlPath`/hsm/v2/groups/${label}/members`, { body: { id }, accept: [404, 409] }),
    );
    // On add, 404 can only mean the group went away meanwhile.
    if (statuses.includes(404)) throw new GroupNotFoundError(label);
  }

  async removeGroupMembers(label: string, names: readonly string[]): Promise<void> {
    validNodeNames(names);
    const present = new Set(await this.getGroupMembers(label));
    const toRemove = [...new Set(names)].filter((n) => present.has(n));
    const statuses = await this.eachLimited(toRemove, (id) =>
      this.http.request('DELETE', urlPath`/hsm/v2/groups/${label}/members/${id}`, { accept: [404] }),
    );
    if (!statuses.includes(404)) return;
    // A 404 is not proof of removal (a proxy or a transient HSM fault answers it too): done only once a read shows the member gone.
    const after = new Set(await this.getGroupMembers(label));
    const stillThere = toRemove.filter((id, i) => statuses[i] === 404 && after.has(id));
    if (stillThere.length > 0) {
      throw new SiteServiceError('inventory', `DELETE of ${shortList(stillThere)} from group '${label}' answered 404, yet they are still members`, 404);
    }
  }

  async listGroupLabels(): Promise<string[]> {
    const response = await this.http.request('GET', '/hsm/v2/groups');
    return this.http.parse(groupsResponse, response).map((group) => group.label);
  }

  /**
   * SMD's nodes (`GET /hsm/v2/State/Components?type=Node`) with their groups (`GET
   * /hsm/v2/memberships?type=Node`): `ID` the name, `NID`, `Role`; alive in state Ready or On;
   * available while `Enabled`. Group labels follow core/site/node-labels.ts (`rack:<rack>`, else the
   * xname's cabinet; `deploy-role:<role>`; other `key:value` labels; the rest tags); `SubRole` and
   * the partition are the labels `subrole` and `partition`.
   */
  async listNodes(): Promise<InventoryNode[]> {
    const [components, memberships] = await Promise.all([
      this.http.request('GET', '/hsm/v2/State/Components?type=Node').then((r) => this.http.parse(componentsResponse, r).Components),
      this.http.request('GET', '/hsm/v2/memberships?type=Node').then((r) => this.http.parse(membershipsResponse, r)),
    ]);
    const byId = new Map(memberships.map((m) => [m.id, m]));
    // Built without spreads (the same keys, in the same order): a fleet of 10,000 nodes is listed at every increment.
    const nodes: InventoryNode[] = [];
    for (const component of components) {
      if ((component.Type ?? 'Node') !== 'Node') continue;
      const membership = byId.get(component.ID);
      const { rack, roles, labels, tags } = readNodeLabels(membership?.groupLabels ?? []);
      const cabinet = rack ?? CABINET.exec(component.ID)?.[1];
      // Without an NID, the node's place among the nodes listed.
      const node = { name: component.ID, nid: component.NID ?? nodes.length + 1 } as InventoryNode;
      if (cabinet !== undefined) node.rack = cabinet;
      node.role = component.Role || DEFAULT_ROLE;
      node.tags = tags;
      node.roles = roles;
      node.labels = component.SubRole || membership?.partitionName ? withSmdLabels(component.SubRole, membership?.partitionName, labels) : labels;
      node.alive = ALIVE_STATES.has(component.State ?? 'Ready');
      node.available = component.Enabled !== false;
      nodes.push(node);
    }
    return nodes;
  }

  private async eachLimited(ids: readonly string[], send: (id: string) => Promise<{ status: number }>): Promise<number[]> {
    const limit = pLimit(CONCURRENCY);
    const responses = await Promise.all(ids.map((id) => limit(() => send(id))));
    return responses.map((r) => r.status);
  }
}

/** SMD's SubRole and partition as the labels `subrole` and `partition`, before the group labels (which win). */
function withSmdLabels(subRole: string | null | undefined, partition: string | null | undefined, labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  if (subRole) out.subrole = subRole;
  if (partition) out.partition = partition;
  return Object.assign(out, labels);
}
