import { z } from 'zod';
import { isNodeXname } from '../../core/site/node-names';
import type { GroupRecord, InventoryNodeRecord } from '../models/inventory';
import type { SiteSimulator } from '../site-simulator';
import { SimRequestError } from '../errors';
import { ok, problem, readBody, type Route, type ServiceApi } from './route';

const id = z.string({ error: 'id is required' }).trim().min(1, 'id must not be empty');

const groupSchema = z.object({
  label: z.string({ error: 'label is required' }).trim().min(1, 'label must not be empty'),
  description: z.string().default(''),
  tags: z.array(z.string()).default([]),
  exclusiveGroup: z.string().optional(),
  members: z.object({ ids: z.array(id) }).default({ ids: [] }),
});

const memberSchema = z.object({ id });

const deleted = ok({ code: 0, message: 'deleted 1 entry' });

/**
 * HSM/SMD v2: groups, and the nodes as State/Components and memberships. On a CSM-style site it
 * checks what SMD checks (Cray-HPE/hms-smd cmd/smd/smd-api.go): group labels lowercased then
 * matched against `^[-a-z0-9:._]+$` (pkg/sm/groups.go NormalizeGroupField, VerifyGroupField: 400
 * "Invalid group label."), member ids as xnames (hms-xname IsHMSCompIDValid: 400 "invalid xname
 * ID"). Elsewhere it serves the site's own names, a stand-in with HSM's API.
 */
export function hsmApi(sim: SiteSimulator): ServiceApi {
  const names = hsmNames(sim);
  return {
    service: 'inventory',
    prefix: /^\/hsm\//,
    errorBody: problem,
    routes: [...groupRoutes(sim.inventory, names), ...nodeRoutes(sim, names)],
  };
}

/** Group labels and member ids as SMD checks them on a CSM-style site (the site's own names elsewhere). */
function hsmNames(sim: SiteSimulator) {
  const strict = sim.names.mapped;
  const label = (raw: string) => {
    if (!strict) return raw;
    const normal = raw.toLowerCase();
    if (!/^[-a-z0-9:._]+$/.test(normal)) throw new SimRequestError(400, 'Invalid group label.');
    return normal;
  };
  const xname = (raw: string) => {
    if (!strict) return raw;
    const normal = raw.trim().toLowerCase();
    if (!isNodeXname(normal)) throw new SimRequestError(400, 'invalid xname ID');
    return normal;
  };
  // A query's id (ComponentFilter): SMD's message for a bad one differs from a member id's.
  const queryId = (raw: string) => {
    if (!strict) return raw;
    const normal = raw.trim().toLowerCase();
    if (!isNodeXname(normal)) throw new SimRequestError(400, 'bad query param: Argument was not a valid xname ID');
    return normal;
  };
  return { label, xname, queryId };
}
type HsmNames = ReturnType<typeof hsmNames>;

// sendJsonNewResourceIDArray (cmd/smd/response.go): 201 and [{"URI": ...}] (sm.ResourceURI).
const created = (uri: string) => ok([{ URI: uri }], 201);

/** The groups and their members. */
function groupRoutes(inventory: SiteSimulator['inventory'], { label, xname }: HsmNames): Route[] {
  return [
    { method: 'GET', path: /^\/hsm\/v2\/groups$/, handle: () => ok(inventory.listGroups().map(toHsmGroup)) },
    {
      method: 'POST',
      path: /^\/hsm\/v2\/groups$/,
      handle: (_params, body) => {
        const group = readBody(groupSchema, body);
        const name = label(group.label);
        inventory.createGroup(name, group.members.ids.map(xname), group.description, group.tags, group.exclusiveGroup && label(group.exclusiveGroup));
        return created(`/hsm/v2/groups/${name}`);
      },
    },
    { method: 'GET', path: /^\/hsm\/v2\/groups\/([^/]+)$/, handle: ([raw]) => ok(toHsmGroup(inventory.getGroup(label(raw!)))) },
    {
      method: 'DELETE',
      path: /^\/hsm\/v2\/groups\/([^/]+)$/,
      handle: ([raw]) => {
        inventory.deleteGroup(label(raw!));
        return deleted;
      },
    },
    {
      method: 'POST',
      path: /^\/hsm\/v2\/groups\/([^/]+)\/members$/,
      handle: ([raw], body) => {
        const name = label(raw!);
        const id = xname(readBody(memberSchema, body).id);
        inventory.addMember(name, id);
        return created(`/hsm/v2/groups/${name}/members/${id}`);
      },
    },
    {
      method: 'DELETE',
      path: /^\/hsm\/v2\/groups\/([^/]+)\/members\/([^/]+)$/,
      handle: ([raw, member]) => {
        inventory.removeMember(label(raw!), xname(member!));
        return deleted;
      },
    },
  ];
}

/** The nodes: one node's groups, State/Components, and every node's groups. */
function nodeRoutes(sim: SiteSimulator, names: HsmNames): Route[] {
  const { xname } = names;
  const inventory = sim.inventory;
  return [
    {
      method: 'GET',
      path: /^\/hsm\/v2\/memberships\/([^/]+)$/,
      handle: ([raw]) => {
        const id = xname(raw!);
        if (!inventory.hasNode(id)) throw new SimRequestError(404, `No such xname: ${id}`);
        return ok({ id, groupLabels: inventory.groupsOf(id), partitionName: '' });
      },
    },
    {
      method: 'GET',
      path: /^\/hsm\/v2\/State\/Components$/,
      // nidonly=true: "only component NID field (plus xname/ID and type)" (api/swagger_v2.yaml).
      handle: (_params, _body, query) =>
        ok({
          Components: selectNodes(sim, query, names).map((node) =>
            query.get('nidonly') === 'true' ? { ID: node.name, Type: 'Node', NID: node.nid } : toSmdComponent(node),
          ),
        }),
    },
    {
      method: 'GET',
      path: /^\/hsm\/v2\/memberships$/,
      handle: (_params, _body, query) => {
        const selected = selectNodes(sim, query, names);
        // A few ids: each node's groups; else every group's members once.
        const groupsOf = new Map<string, string[]>();
        if (query.getAll('id').length > 0) for (const node of selected) groupsOf.set(node.name, inventory.groupsOf(node.name));
        else
          for (const group of inventory.listGroups()) for (const member of group.members) groupsOf.set(member, [...(groupsOf.get(member) ?? []), group.label]);
        return ok(selected.map((node) => ({ id: node.name, groupLabels: groupLabelsOf(node, groupsOf.get(node.name) ?? []), partitionName: '' })));
      },
    },
  ];
}

/**
 * The nodes `GET /State/Components` and `/memberships` answer for: filtered by type (only `Node` here), id, role,
 * enabled and group. Ids as SMD takes them (Cray-HPE/hms-smd cmd/smd/smd-api.go doComponentsGet and
 * doMembershipsGet read every ComponentFilter field, `id` repeated; internal/hmsds/query-shared-sq.go
 * normalizes each and answers 400 `bad query param: Argument was not a valid xname ID` to one that is not an
 * xname, on a CSM-style site); an unknown id is just absent.
 */
function selectNodes(sim: SiteSimulator, query: URLSearchParams, names: HsmNames): InventoryNodeRecord[] {
  const types = query.getAll('type');
  if (types.length > 0 && !types.some((t) => t.toLowerCase() === 'node')) return [];
  const ids = new Set(query.getAll('id').map((raw) => names.queryId(raw)));
  const roles = new Set(query.getAll('role').map((r) => r.toLowerCase()));
  const enabled = query.get('enabled');
  const group = query.get('group');
  const members = group === null ? undefined : new Set(sim.inventory.hasGroup(group) ? sim.inventory.getGroup(group).members : []);
  // Ids are looked up, not searched for among every node.
  const nodes = ids.size > 0 ? [...ids].flatMap((id) => sim.inventory.getNode(id) ?? []) : sim.inventory.listNodes();
  return nodes
    .filter((n) => roles.size === 0 || roles.has(n.role.toLowerCase()))
    .filter((n) => enabled === null || String(n.available !== false) === enabled.toLowerCase())
    .filter((n) => members === undefined || members.has(n.name));
}

/** Component.1.0.0_Component: a site node as SMD describes it (a node not alive is Off, one not available is disabled). */
function toSmdComponent(node: InventoryNodeRecord) {
  return {
    ID: node.name,
    Type: 'Node',
    State: node.alive === false ? 'Off' : 'Ready',
    Flag: 'OK',
    Enabled: node.available !== false,
    Role: node.role,
    NID: node.nid,
    NetType: 'Sling',
    Arch: 'X86',
    Class: 'River',
  };
}

/**
 * Membership.1.0.0's groupLabels: the node's site groups, then its rack, tags, labels and deployment
 * roles as the group labels core/site/node-labels.ts reads (SMD has no fields of its own for them).
 */
function groupLabelsOf(node: InventoryNodeRecord, siteGroups: readonly string[]): string[] {
  return [
    ...siteGroups,
    ...(node.rack !== undefined ? [`rack:${node.rack}`] : []),
    ...node.tags,
    ...Object.entries(node.labels).map(([key, value]) => `${key}:${value}`),
    ...(node.roles ?? []).map((role) => `deploy-role:${role}`),
  ];
}

function toHsmGroup(group: GroupRecord) {
  return {
    label: group.label,
    description: group.description,
    tags: group.tags,
    ...(group.exclusiveGroup ? { exclusiveGroup: group.exclusiveGroup } : {}),
    members: { ids: group.members },
  };
}
