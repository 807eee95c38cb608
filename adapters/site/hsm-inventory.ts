import pLimit from 'p-limit';
import { z } from 'zod';
import { GroupNotFoundError, SiteServiceError } from '../../core/errors';
import { shortList } from '../../core/text';
import type { Inventory, InventoryNode } from '../../ports/site';
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
const nodesResponse = z.object({
  nodes: z.array(
    z.object({
      name: z.string(),
      nid: z.number(),
      rack: z.string().optional(),
      role: z.string(),
      tags: z.array(z.string()),
      roles: z.array(z.string()).optional(),
      labels: z.record(z.string(), z.string()),
      alive: z.boolean().optional(),
      available: z.boolean().optional(),
    }),
  ),
});

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
    const response = await this.http.request('GET', urlPath`/hsm/v2/groups/${label}`, { accept: [404] });
    if (response.status === 404) throw new GroupNotFoundError(label);
    return this.http.parse(groupResponse, response).members.ids;
  }

  async addGroupMembers(label: string, names: readonly string[]): Promise<void> {
    const present = new Set(await this.getGroupMembers(label));
    const missing = [...new Set(names)].filter((n) => !present.has(n));
    const statuses = await this.eachLimited(missing, (id) =>
      this.http.request('POST', urlPath`/hsm/v2/groups/${label}/members`, { body: { id }, accept: [404, 409] }),
    );
    // On add, 404 can only mean the group went away meanwhile.
    if (statuses.includes(404)) throw new GroupNotFoundError(label);
  }

  async removeGroupMembers(label: string, names: readonly string[]): Promise<void> {
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

  async listNodes(): Promise<InventoryNode[]> {
    const response = await this.http.request('GET', '/inventory/v1/nodes');
    return this.http.parse(nodesResponse, response).nodes;
  }

  private async eachLimited(ids: readonly string[], send: (id: string) => Promise<{ status: number }>): Promise<number[]> {
    const limit = pLimit(CONCURRENCY);
    const responses = await Promise.all(ids.map((id) => limit(() => send(id))));
    return responses.map((r) => r.status);
  }
}
