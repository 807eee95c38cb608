import { z } from 'zod';
import { environmentSchema, releaseSchema, siteEnvironmentsSchema } from '../environments';
import { InvalidInputError } from '../errors';
import { parseOrThrow } from '../validation';
import { groupLabel, nodeName } from '../site/names';
import { CSM_NID_NAME_PATTERN, isNodeXname, nidName, parseNidNamePattern } from '../site/node-names';

/**
 * A site definition's inventory part: its nodes, groups, boot templates, HSM exclusive groups, CSM
 * naming, releases and environments. A file inventory (adapters/site/file-inventory.ts) reads it;
 * the simulator (simulator/site-file.ts) extends it with what only a simulated site has: Slurm's
 * settings and node states, faults, timing and a workload. Those keys are named here, so that a
 * site file is read by both, each checking its own part and no key going unnoticed.
 */

const nonEmpty = (what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .trim()
    .min(1, `${what} must not be empty`);

/** A node as the inventory knows it. */
export const inventoryNodeShape = {
  name: nodeName('name').describe("The node's name (an xname on Cray systems; any hostname elsewhere), unique"),
  nid: z
    .number({ error: 'nid is required and must be a whole number' })
    .int('nid must be a whole number')
    .min(0, 'nid must not be negative')
    .describe("The node's number, unique"),
  rack: nonEmpty('rack').optional().describe("The node's rack: what maxUnavailablePerRack and rack_names selectors read"),
  role: nonEmpty('role').default('Compute').describe("HSM's role of the node"),
  tags: z.array(nonEmpty('a tag')).default([]).describe('Tags that node_tags selectors match'),
  /** Deployment roles for task graphs (core/task-graph). */
  roles: z
    .array(nonEmpty('a role'), { error: 'roles must be a list of role names' })
    .default([])
    .describe('Deployment roles for task graphs (none: the node takes part in no graph)'),
  labels: z
    .record(z.string(), z.string({ error: 'label values must be strings' }))
    .default({})
    .describe('Labels that node_labels selectors match'),
  /** OpenCrowbar's gates, served by the inventory: a scheduler operates only on nodes alive and available. */
  alive: z.boolean({ error: 'alive must be true or false' }).default(true).describe("The inventory's gate: false, the node is never operated on"),
  available: z
    .boolean({ error: 'available must be true or false' })
    .default(true)
    .describe("The inventory's gate: false, the node is left alone, not failed (HSM disabled)"),
};

/**
 * A BOS v2 boot set (Cray-HPE/bos api/openapi.yaml.in, V2BootSet): which nodes a session template
 * boots. BOS's session setup (src/bos/operators/session_setup.py) unites node_list, the members of
 * node_groups and the nodes of node_roles_groups (HSM Role, or Role_SubRole), then intersects that
 * with the session's limit and drops nodes disabled in HSM.
 */
const bootSetSchema = z.strictObject({
  node_list: z.array(nodeName('a node_list entry')).optional().describe('Nodes the boot set boots, by name'),
  node_groups: z
    .array(z.string({ error: 'a node_groups entry must be a group label' }))
    .optional()
    .describe('Groups whose members the boot set boots'),
  node_roles_groups: z
    .array(z.string({ error: 'a node_roles_groups entry must be a role' }))
    .optional()
    .describe('HSM roles (Role or Role_SubRole) whose nodes the boot set boots'),
  /** HSM's Arch of the nodes booted (X86 also takes nodes of unknown arch); the simulated nodes are X86. */
  arch: z
    .enum(['X86', 'ARM', 'Other', 'Unknown'], { error: 'arch must be X86, ARM, Other or Unknown' })
    .optional()
    .describe("HSM's Arch of the nodes booted (X86 also takes nodes of unknown arch); the simulated nodes are X86"),
});

/** A boot template: a name alone (the limit says which nodes it boots), or a BOS session template with its boot sets. */
const bootTemplateSchema = z.union(
  [
    nonEmpty('a template name'),
    z.strictObject({
      name: nonEmpty('name').describe("The template's name"),
      bootSets: z
        .record(nonEmpty('a boot set name'), bootSetSchema, { error: 'bootSets must map boot set names to boot sets' })
        .refine((sets) => Object.keys(sets).length > 0, 'a session template has at least one boot set')
        .describe("BOS boot sets by name: which nodes the template boots (intersected with the session's limit)"),
    }),
  ],
  { error: 'a boot template is a name, or {name, bootSets: {<set>: {node_list, node_groups, node_roles_groups}}}' },
);

/**
 * A CSM-style site (Cray's System Management): its nodes are xnames in HSM and BOS, and Slurm
 * names them from their nid by `slurmNodeNames` (CSM's `nid{nid:06}`); its HSM checks labels and
 * member ids as SMD does.
 */
const csmSchema = z.strictObject({
  slurmNodeNames: z
    .string({ error: 'slurmNodeNames must be a pattern such as nid{nid:06}' })
    .default(CSM_NID_NAME_PATTERN)
    .superRefine((text, ctx) => {
      const parsed = parseNidNamePattern(text);
      if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
    })
    .describe("How Slurm names a node from its nid (CSM's nid{nid:06})"),
});

/** The site's inventory keys, with the node list each reader gives its own node schema. */
export function siteInventoryShape<Node extends z.ZodType>(node: Node) {
  return {
    nodes: z.array(node, { error: 'nodes is required and must be a list' }).min(1, 'at least one node is required').describe("The site's nodes"),
    groups: z
      .record(groupLabel(), z.array(nodeName('a member'), { error: 'must be a list of node names' }))
      .default({})
      .describe("Groups (HSM's) by label, each a list of node names; a label not listed does not exist"),
    bootTemplates: z.array(bootTemplateSchema).default([]).describe('Boot templates: a name (its BOS limit names the nodes), or {name, bootSets}'),
    /** HSM exclusive groups: a node is a member of at most one group of each (Cray-HPE/hms-smd pkg/sm/groups.go ExclusiveGroup). */
    exclusiveGroups: z
      .record(nonEmpty('an exclusive group name'), z.array(groupLabel('a group label'), { error: 'must be a list of group labels' }))
      .default({})
      .describe('HSM exclusive groups: a node is a member of at most one group of each'),
    csm: csmSchema.optional().describe('A CSM-style site: nodes named by xname in HSM and BOS, and by slurmNodeNames from their nid in Slurm'),
    /** Fuel's releases and environments (clusters), kept by the store and served by the API. */
    releases: z.array(releaseSchema, { error: 'releases must be a list' }).default([]).describe("Fuel's releases, kept by the store and served by the API"),
    environments: z
      .array(environmentSchema, { error: 'environments must be a list' })
      .default([])
      .describe("Fuel's environments (clusters) of the site's nodes, kept by the store and served by the API"),
  };
}

/** The keys only a simulated site reads (simulator/site-file.ts): a node's and the site's. */
export const SIMULATION_NODE_KEYS = ['wlm', 'faults'] as const;
export const SIMULATION_SITE_KEYS = ['timing', 'apiFaults', 'workload', 'slurm', 'commandFaults'] as const;

const passedOver = <Keys extends readonly string[]>(keys: Keys) =>
  Object.fromEntries(keys.map((key) => [key, z.unknown().optional()])) as Record<Keys[number], z.ZodOptional<z.ZodUnknown>>;

const inventoryNodeSchema = z.strictObject({ ...inventoryNodeShape, ...passedOver(SIMULATION_NODE_KEYS) });

/** What the cross checks read of a site. */
type InventoryChecked = z.output<z.ZodObject<ReturnType<typeof siteInventoryShape<typeof inventoryNodeSchema>>>>;

/** The cross checks of a site's inventory: unique names and nids, groups of known nodes, releases of known templates, CSM's rules. */
export function checkSiteInventory(site: InventoryChecked, ctx: z.RefinementCtx): void {
  // The cross checks of releases and environments live with their schemas.
  const environments = siteEnvironmentsSchema.safeParse({ releases: site.releases, environments: site.environments });
  if (!environments.success) for (const issue of environments.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  const firstByName = checkUniqueNodes(site, ctx);
  checkEnvironmentNodesAndReleases(site, firstByName, ctx);
  if (site.csm) checkCsmNames(site, site.csm, ctx);
  checkExclusiveGroups(site, ctx);
  checkGroupMembers(site, firstByName, ctx);
}

/** Every node name and nid once. Returns where each name first comes (the other checks ask it whether a name is a node's). */
function checkUniqueNodes(site: InventoryChecked, ctx: z.RefinementCtx): Map<string, number> {
  const firstByName = new Map<string, number>();
  const firstByNid = new Map<number, number>();
  site.nodes.forEach((node, i) => {
    const sameName = firstByName.get(node.name);
    if (sameName === undefined) firstByName.set(node.name, i);
    else ctx.addIssue({ code: 'custom', path: ['nodes', i, 'name'], message: `duplicate node name '${node.name}' (also nodes[${sameName}])` });
    const sameNid = firstByNid.get(node.nid);
    if (sameNid === undefined) firstByNid.set(node.nid, i);
    else ctx.addIssue({ code: 'custom', path: ['nodes', i, 'nid'], message: `duplicate nid ${node.nid} (also nodes[${sameNid}])` });
  });
  return firstByName;
}

/** An environment's nodes are site nodes (by name): the side-by-side upgrade reimages them. A release installs with one of the site's templates. */
function checkEnvironmentNodesAndReleases(site: InventoryChecked, firstByName: ReadonlyMap<string, number>, ctx: z.RefinementCtx): void {
  site.environments.forEach((env, e) =>
    env.nodes.forEach((node, n) => {
      if (!firstByName.has(node.name))
        ctx.addIssue({ code: 'custom', path: ['environments', e, 'nodes', n, 'name'], message: `'${node.name}' is not a node of the site` });
    }),
  );
  const templateNames = site.bootTemplates.map((t) => (typeof t === 'string' ? t : t.name));
  site.releases.forEach((release, r) => {
    if (!templateNames.includes(release.bootTemplate)) {
      ctx.addIssue({ code: 'custom', path: ['releases', r, 'bootTemplate'], message: `'${release.bootTemplate}' is not one of the site's bootTemplates` });
    }
  });
}

/** CSM's rules: nodes named by xname, one Slurm name per nid, groups labelled as HSM labels. */
function checkCsmNames(site: InventoryChecked, csm: NonNullable<InventoryChecked['csm']>, ctx: z.RefinementCtx): void {
  const pattern = parseNidNamePattern(csm.slurmNodeNames);
  const slurmNames = new Map<string, number>();
  site.nodes.forEach((node, i) => {
    if (!isNodeXname(node.name))
      ctx.addIssue({
        code: 'custom',
        path: ['nodes', i, 'name'],
        message: `'${node.name}' is not a node xname (xXcCsSbBnN): a CSM site names its nodes by xname`,
      });
    if (typeof pattern !== 'string') {
      const slurmName = nidName(pattern, node.nid);
      const clash = slurmNames.get(slurmName);
      if (clash !== undefined) ctx.addIssue({ code: 'custom', path: ['nodes', i, 'nid'], message: `Slurm name ${slurmName} also names nodes[${clash}]` });
      slurmNames.set(slurmName, i);
    }
  });
  for (const label of Object.keys(site.groups)) {
    if (!/^[-a-z0-9:._]+$/.test(label))
      ctx.addIssue({
        code: 'custom',
        path: ['groups', label],
        message: `'${label}' is not an HSM group label: lowercase letters, digits, '-', ':', '.', '_'`,
      });
  }
}

/** An exclusive group names groups of the site, each in one exclusive group only, and no node is in two of its groups. */
function checkExclusiveGroups(site: InventoryChecked, ctx: z.RefinementCtx): void {
  const exclusiveOf = new Map<string, string>();
  for (const [exclusive, labels] of Object.entries(site.exclusiveGroups)) {
    labels.forEach((label, k) => {
      if (!(label in site.groups)) ctx.addIssue({ code: 'custom', path: ['exclusiveGroups', exclusive, k], message: `'${label}' is not a group of the site` });
      const other = exclusiveOf.get(label);
      if (other !== undefined)
        ctx.addIssue({ code: 'custom', path: ['exclusiveGroups', exclusive, k], message: `'${label}' is in exclusive group '${other}' already` });
      exclusiveOf.set(label, exclusive);
    });
    const holder = new Map<string, string>();
    for (const label of labels) {
      for (const member of site.groups[label] ?? []) {
        const first = holder.get(member);
        if (first !== undefined)
          ctx.addIssue({ code: 'custom', path: ['groups', label], message: `'${member}' is also in '${first}', of the same exclusive group '${exclusive}'` });
        holder.set(member, label);
      }
    }
  }
}

/** A group's members are nodes of the site, each listed once. */
function checkGroupMembers(site: InventoryChecked, firstByName: ReadonlyMap<string, number>, ctx: z.RefinementCtx): void {
  for (const [label, members] of Object.entries(site.groups)) {
    const seen = new Set<string>();
    members.forEach((member, k) => {
      if (!firstByName.has(member)) ctx.addIssue({ code: 'custom', path: ['groups', label, k], message: `'${member}' is not a node of the site` });
      else if (seen.has(member)) ctx.addIssue({ code: 'custom', path: ['groups', label, k], message: `'${member}' is listed twice` });
      seen.add(member);
    });
  }
}

/**
 * A site file as an inventory reads it: the inventory part checked, the simulation keys passed over
 * unread (the simulator checks them when it runs the site).
 */
export const siteInventorySchema = z
  .strictObject({ ...siteInventoryShape(inventoryNodeSchema), ...passedOver(SIMULATION_SITE_KEYS) })
  .superRefine(checkSiteInventory);

export type SiteInventory = z.output<typeof siteInventorySchema>;
export type SiteBootTemplate = z.output<typeof bootTemplateSchema>;
export type SiteBootSet = z.output<typeof bootSetSchema>;

/** The name of a site boot template, whichever form it has. */
export const templateName = (template: SiteBootTemplate): string => (typeof template === 'string' ? template : template.name);

export function parseSiteInventory(input: unknown, subject = 'site definition'): SiteInventory {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidInputError(subject, [{ field: '', message: 'the site must be a mapping with at least `nodes`' }]);
  }
  return parseOrThrow(siteInventorySchema, input, subject);
}
