import pLimit from 'p-limit';
import { z } from 'zod';
import { ExclusiveGroupConflictError, GroupNotFoundError, InvalidInputError, SiteServiceError } from '../../core/errors';
import { isNodeXname, NODE_XNAME_PATTERN } from '../../core/site/node-names';
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
  /**
   * Whether member ids are checked as node xnames before they are sent (HSM refuses anything else
   * with 400). Default true; false only for an HSM-like service whose ids are not xnames (the
   * simulator serving a site whose nodes are not Cray's).
   */
  xnames?: boolean;
}

/**
 * SMD's group label rule (Cray-HPE/hms-smd pkg/sm/groups.go: NormalizeGroupField lowercases,
 * VerifyGroupField matches `^[-a-z0-9:._]+$`): a label SMD would answer 400 to, or a message.
 */
export const HSM_LABEL_PATTERN = /^[-a-z0-9:._]+$/;
export function hsmLabelProblem(label: string): string | undefined {
  return HSM_LABEL_PATTERN.test(label.toLowerCase())
    ? undefined
    : `${JSON.stringify(label.slice(0, 80))} is not an HSM group label: after lowercasing, only letters a-z, digits, '-', ':', '.', '_' (HSM answers 400 to anything else; 'rack:x3000', not 'rack=x3000')`;
}

const CONCURRENCY = 16;

const groupResponse = z.object({ label: z.string(), exclusiveGroup: z.string().nullish(), members: z.object({ ids: z.array(z.string()) }) });
/** Membership.1.0.0 of one component (`GET /memberships/{xname}`). */
const membershipResponse = z.object({ id: z.string(), groupLabels: z.array(z.string()).nullish() });
/** `nidonly=true`: ID, Type and NID alone (api/swagger_v2.yaml, GET /State/Components). */
const nidsResponse = z.object({ Components: z.array(z.object({ ID: z.string(), Type: z.string().nullish(), NID: z.number().nullish() })) });
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
  private readonly xnames: boolean;

  constructor({ baseUrl, bearerToken, timeoutMs, xnames = true }: HsmOptions) {
    this.http = new HttpJsonClient({ service: 'inventory', baseUrl, bearerToken, timeoutMs });
    this.xnames = xnames;
  }

  /** HSM's label rule, for checking a request's labels before anything runs. */
  labelProblem(label: string): string | undefined {
    return hsmLabelProblem(label);
  }

  async getGroupMembers(label: string): Promise<string[]> {
    return (await this.getGroup(label)).members.ids;
  }

  private async getGroup(label: string): Promise<z.output<typeof groupResponse>> {
    this.checkLabel(label);
    const response = await this.http.request('GET', urlPath`/hsm/v2/groups/${label}`, { accept: [404] });
    if (response.status === 404) throw new GroupNotFoundError(label);
    return this.http.parse(groupResponse, response);
  }

  async addGroupMembers(label: string, names: readonly string[]): Promise<void> {
    this.checkMembers(names);
    const present = new Set(await this.getGroupMembers(label));
    const missing = [...new Set(names)].filter((n) => !present.has(n));
    const statuses = await this.eachLimited(missing, (id) =>
      this.http.request('POST', urlPath`/hsm/v2/groups/${label}/members`, { body: { id }, accept: [404, 409] }),
    );
    // On add, 404 can only mean the group went away meanwhile.
    if (statuses.includes(404)) throw new GroupNotFoundError(label);
    const conflicts = missing.filter((_, i) => statuses[i] === 409);
    if (conflicts.length > 0) await this.settleConflicts(label, conflicts);
  }

  /**
   * SMD answers 409 both to a member already there (ErrHMSDSDuplicateKey: done, a concurrent add
   * won) and to a node in another group of the group's exclusive group (ErrHMSDSExclusiveGroup: a
   * refusal), with messages that name neither group (cmd/smd/smd-api.go doGroupMembersPost). A read
   * tells them apart; the other group is found through the node's memberships.
   */
  private async settleConflicts(label: string, conflicts: readonly string[]): Promise<void> {
    const group = await this.getGroup(label);
    const present = new Set(group.members.ids);
    const refused = conflicts.find((id) => !present.has(id));
    if (refused === undefined) return;
    const exclusive = group.exclusiveGroup || undefined;
    let other: string | undefined;
    const membership = await this.http.request('GET', urlPath`/hsm/v2/memberships/${refused}`, { accept: [404] });
    if (membership.status !== 404) {
      const labels = (this.http.parse(membershipResponse, membership).groupLabels ?? []).filter((l) => l !== label.toLowerCase());
      for (const candidate of labels) {
        const candidateGroup = await this.getGroup(candidate).catch(() => undefined);
        if (candidateGroup && (exclusive === undefined || candidateGroup.exclusiveGroup === exclusive)) {
          other = candidate;
          if (candidateGroup.exclusiveGroup) break;
        }
      }
    }
    throw new ExclusiveGroupConflictError(label, refused, other, exclusive);
  }

  async removeGroupMembers(label: string, names: readonly string[]): Promise<void> {
    this.checkMembers(names);
    const present = new Set(await this.getGroupMembers(label));
    const toRemove = [...new Set(names)].filter((n) => present.has(n));
    const statuses = await this.eachLimited(toRemove, (id) => this.http.request('DELETE', urlPath`/hsm/v2/groups/${label}/members/${id}`, { accept: [404] }));
    if (!statuses.includes(404)) return;
    // A 404 is not proof of removal (a proxy or a transient HSM fault answers it too): done only once a read shows the member gone.
    const after = new Set(await this.getGroupMembers(label));
    const stillThere = toRemove.filter((id, i) => statuses[i] === 404 && after.has(id));
    if (stillThere.length > 0) {
      throw new SiteServiceError('inventory', `DELETE of ${shortList(stillThere)} from group '${label}' answered 404, yet they are still members`, 404);
    }
  }

  /** Each node's NID from one `nidonly` listing (ID, Type and NID alone): what maps xnames to Slurm's nid names. */
  async listNids(): Promise<Map<string, number>> {
    const response = await this.http.request('GET', '/hsm/v2/State/Components?type=Node&nidonly=true');
    const nids = new Map<string, number>();
    for (const c of this.http.parse(nidsResponse, response).Components) if ((c.Type ?? 'Node') === 'Node' && typeof c.NID === 'number') nids.set(c.ID, c.NID);
    return nids;
  }

  private checkLabel(label: string): void {
    validLabel(label, 'label');
    const problem = hsmLabelProblem(label);
    if (problem) throw new InvalidInputError('group label', [{ field: 'label', message: problem }]);
  }

  /** Names as node names, then (an HSM whose ids are xnames) as node xnames: HSM answers 400 `invalid xname ID` otherwise. */
  private checkMembers(names: readonly string[]): void {
    validNodeNames(names);
    if (!this.xnames) return;
    const bad = names.flatMap((name, i) =>
      isNodeXname(name)
        ? []
        : [
            {
              field: `nodes[${i}]`,
              message: `${JSON.stringify(name)} is not a node xname (${NODE_XNAME_PATTERN.source}): HSM accepts only xnames as member ids`,
            },
          ],
    );
    if (bad.length > 0) throw new InvalidInputError('HSM group members', bad);
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
    return this.readNodes('type=Node');
  }

  /**
   * The named nodes alone: the same two reads as listNodes, filtered by `id` (repeated, one per
   * node), a chunk of ids per request pair. SMD takes every ComponentFilter field as a query
   * parameter of both `GET /State/Components` and `GET /memberships` (hms-smd cmd/smd/smd-api.go
   * doComponentsGet, doMembershipsGet; the ids matched in internal/hmsds/query-shared-sq.go
   * whereComponentCol) and sets no limit on their number; the limit is the URL's, at the proxies in
   * front of it (the API gateway), hence chunks of at most ID_QUERY_CHARS characters. SMD answers 400
   * to an id that is not an xname (ErrHMSDSArgBadID): such a name is unknown, never sent.
   */
  async getNodes(names: readonly string[]): Promise<Map<string, InventoryNode>> {
    const ids = [...new Set(names)].filter((name) => !this.xnames || isNodeXname(name));
    const limit = pLimit(CONCURRENCY / 2);
    const read = await Promise.all(idQueries(ids).map((query) => limit(() => this.readNodes(`type=Node&${query}`))));
    return new Map(read.flat().map((node) => [node.name, node]));
  }

  /**
   * SMD's nodes (`GET /hsm/v2/State/Components?<query>`) with their groups (`GET
   * /hsm/v2/memberships?<query>`): `ID` the name, `NID`, `Role`; alive in state Ready or On;
   * available while `Enabled`. Group labels follow core/site/node-labels.ts (`rack:<rack>`, else the
   * xname's cabinet; `deploy-role:<role>`; other `key:value` labels; the rest tags); `SubRole` and
   * the partition are the labels `subrole` and `partition`.
   */
  private async readNodes(query: string): Promise<InventoryNode[]> {
    const [components, memberships] = await Promise.all([
      this.http.request('GET', `/hsm/v2/State/Components?${query}`).then((r) => this.http.parse(componentsResponse, r).Components),
      this.http.request('GET', `/hsm/v2/memberships?${query}`).then((r) => this.http.parse(membershipsResponse, r)),
    ]);
    const byId = new Map(memberships.map((m) => [m.id, m]));
    // Built without spreads (the same keys, in the same order): a fleet of 10,000 nodes is listed at every increment.
    const nodes: InventoryNode[] = [];
    for (const component of components) {
      if ((component.Type ?? 'Node') !== 'Node') continue;
      const membership = byId.get(component.ID);
      const { rack, roles, labels, tags } = readNodeLabels(membership?.groupLabels ?? []);
      const cabinet = rack ?? CABINET.exec(component.ID)?.[1];
      // Without an NID (SMD gives every node one when it is added), the node's place among the nodes read.
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

/**
 * The characters of `id=` parameters in one request: well under the 8 KiB request line that common
 * proxies accept (nginx's large_client_header_buffers, Envoy's 60 KiB headers), about 400 xnames.
 */
export const ID_QUERY_CHARS = 7_000;

/** `id=a&id=b...` queries of at most ID_QUERY_CHARS characters each (at least one id each). */
export function idQueries(ids: readonly string[]): string[] {
  const queries: string[] = [];
  let current = '';
  for (const id of ids) {
    const param = `id=${encodeURIComponent(id)}`;
    if (current !== '' && current.length + 1 + param.length > ID_QUERY_CHARS) {
      queries.push(current);
      current = '';
    }
    current = current === '' ? param : `${current}&${param}`;
  }
  if (current !== '') queries.push(current);
  return queries;
}

/** SMD's SubRole and partition as the labels `subrole` and `partition`, before the group labels (which win). */
function withSmdLabels(subRole: string | null | undefined, partition: string | null | undefined, labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  if (subRole) out.subrole = subRole;
  if (partition) out.partition = partition;
  return Object.assign(out, labels);
}
