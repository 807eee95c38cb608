import { z } from 'zod';
import { bootTemplateName, nodeName } from '../site/names';

/**
 * Fuel's releases and environments (Nailgun's clusters), as the site file declares them and the
 * store keeps them. Ids are positive whole numbers as in Nailgun; field names are Fuel's.
 */

const id = (field: string) =>
  z
    .number({ error: `${field} is required and must be a whole number` })
    .int(`${field} must be a whole number`)
    .min(1, `${field} must be at least 1`);
const text = (field: string) =>
  z
    .string({ error: `${field} is required and must be a string` })
    .trim()
    .min(1, `${field} must not be empty`);
const role = text('a role');
/**
 * An environment's name: unique among environments (Nailgun's is 50 characters at most); 200 keeps its
 * claim's key far inside DynamoDB's 1,024-byte sort key.
 */
export const MAX_ENVIRONMENT_NAME_LENGTH = 200;
const environmentName = (field: string) => text(field).max(MAX_ENVIRONMENT_NAME_LENGTH, `${field} must be at most ${MAX_ENVIRONMENT_NAME_LENGTH} characters`);

/**
 * A dotted path into an environment's attributes, starting at `editable` or `generated`:
 * `editable.common.libvirt_type.value`, `generated.mysql.root_password`.
 */
export const attributePathSchema = z
  .string({ error: 'an attribute path must be a string' })
  .regex(/^(editable|generated)(\.[^.\s]+)+$/, 'an attribute path starts with `editable.` or `generated.` and names its keys with dots');

/** How a release changes the attributes of the one before: renamed paths (old -> new) and removed ones. */
export const attributeChangesSchema = z.strictObject({
  renamed: z
    .record(attributePathSchema, attributePathSchema)
    .default({})
    .describe('Attribute paths this release renames: old path -> new path (`editable.a.b` -> `editable.a.c`)'),
  removed: z
    .array(attributePathSchema, { error: 'removed must be a list of attribute paths' })
    .default([])
    .describe('Attribute paths this release removes: a clone of an environment that sets one is refused'),
});

export const releaseSchema = z.strictObject({
  id: id('id').describe("The release's id (a positive whole number)"),
  name: text('name').describe("The release's name"),
  version: text('version').describe("The release's version"),
  roles: z
    .array(role, { error: 'roles must be a list of role names' })
    .describe('The node roles the release defines; a node whose role it lacks cannot be assigned to a seed on it'),
  /** The boot service's template (image) that installs the release: the side-by-side upgrade reimages nodes with it. */
  bootTemplate: bootTemplateName('bootTemplate').describe(
    "The boot service's template (image) that installs the release: the side-by-side upgrade reimages nodes with it",
  ),
  attributeChanges: attributeChangesSchema.prefault({}).describe('How the release changes the attributes of the one before: renamed and removed paths'),
});

/** Nested JSON settings; `generated` holds service credentials and is never returned in clear. */
const attributeTreeSchema = z.record(z.string(), z.unknown());
export const attributesSchema = z.strictObject({
  editable: attributeTreeSchema.default({}).describe('Settings an operator may change (nested JSON)'),
  generated: attributeTreeSchema.default({}).describe('Generated settings (service credentials): never returned in clear'),
});

/** A node of an environment; `name` is the site's node name (the inventory's, Slurm's), which the upgrade reimages. */
export const environmentNodeSchema = z.strictObject({
  id: id('id').describe("The node's id (a positive whole number, unique across environments)"),
  name: nodeName('name').describe("The site's node name (the inventory's, Slurm's), which the upgrade reimages"),
  roles: z.array(role, { error: 'roles must be a list of role names' }).default([]).describe("The node's roles in the environment (e.g. controller, compute)"),
  ip: z.union([z.ipv4(), z.ipv6()], { error: 'ip must be an IPv4 or IPv6 address' }).describe("The node's address, IPv4 or IPv6"),
  mac: z.mac({ error: 'mac must be a MAC address (aa:bb:cc:dd:ee:ff)' }).describe("The node's MAC address (aa:bb:cc:dd:ee:ff)"),
});

/** Fuel's cluster statuses. */
export const ENVIRONMENT_STATUSES = ['new', 'deployment', 'stopped', 'operational', 'error', 'remove', 'update', 'update_error'] as const;

export const environmentSchema = z.strictObject({
  id: id('id').describe("The environment's id (a positive whole number)"),
  name: environmentName('name').describe("The environment's name, unique among environments"),
  release_id: id('release_id').describe('The id of the release the environment runs (a declared release)'),
  status: z
    .enum(ENVIRONMENT_STATUSES, { error: `status must be one of ${ENVIRONMENT_STATUSES.join(', ')}` })
    .default('operational')
    .describe("Fuel's cluster status"),
  attributes: attributesSchema.prefault({}).describe("The environment's settings: editable and generated"),
  nodes: z
    .array(environmentNodeSchema, { error: 'nodes must be a list' })
    .default([])
    .describe("The environment's nodes; a node belongs to one environment at most"),
  /** Set on an upgrade seed: the environment it was cloned from. */
  original_cluster_id: id('original_cluster_id').optional().describe('Set on an upgrade seed: the id of the environment it was cloned from'),
});

/** `POST /environments/{id}/upgrade/clone`: Fuel's "Cluster Clone Parameters", both required. */
export const cloneRequestSchema = z.strictObject({
  name: environmentName('name').describe("The upgrade seed's name (unique among environments)"),
  release_id: id('release_id').describe('The newer release the seed runs'),
});

/** `POST /environments/{seed_id}/upgrade/assign`. */
export const assignRequestSchema = z.strictObject({
  node_id: id('node_id').describe("The id of a node of the seed's original environment, to move into the seed"),
});

/**
 * `POST /environments/{id}/upgrade`: the whole side-by-side upgrade. `name` and `release_id` are the
 * clone's (required when the environment has no seed yet); `rolling_upgrade` is the rolling upgrade
 * of the nodes, as `POST /sessions` takes it, without `upgradeTemplateId` (the release's bootTemplate).
 */
export const environmentUpgradeRequestSchema = z.strictObject({
  name: environmentName('name').optional().describe("The upgrade seed's name: required when the environment has no seed yet"),
  release_id: id('release_id').optional().describe("The release to upgrade to (the seed's): required when the environment has no seed yet"),
  /** Nodes with any of these roles are the controllers: assigned to the seed and reimaged first. */
  controller_roles: z
    .array(role, { error: 'controller_roles must be a list of role names' })
    .min(1, 'controller_roles must not be empty')
    .default(['controller'])
    .describe('Nodes with any of these roles are the controllers: assigned to the seed and reimaged first'),
  rolling_upgrade: z
    .record(z.string(), z.unknown(), {
      error: 'rolling_upgrade is required: the rolling upgrade of the nodes (the fields of POST /sessions without upgradeTemplateId)',
    })
    .describe(
      "The rolling upgrade of the other nodes: the fields of a rolling upgrade request (POST /sessions) without upgradeTemplateId, which is the release's bootTemplate",
    ),
});

export type Release = z.output<typeof releaseSchema>;
export type ReleaseInput = z.input<typeof releaseSchema>;
export type AttributeChanges = z.output<typeof attributeChangesSchema>;
export type Attributes = z.output<typeof attributesSchema>;
export type Environment = z.output<typeof environmentSchema>;
export type EnvironmentInput = z.input<typeof environmentSchema>;
export type EnvironmentNode = z.output<typeof environmentNodeSchema>;
/** An environment's own fields: what is stored for it apart from its nodes (each node's ownership is its own record). */
export type EnvironmentFields = Omit<Environment, 'nodes'>;
export type EnvironmentStatus = (typeof ENVIRONMENT_STATUSES)[number];
export type CloneRequest = z.output<typeof cloneRequestSchema>;
export type AssignRequest = z.output<typeof assignRequestSchema>;
export type EnvironmentUpgradeRequest = z.output<typeof environmentUpgradeRequestSchema>;

/**
 * Releases and environments as one site declares them, checked together: unique ids and names, node
 * ids and names unique across environments, every release_id and original_cluster_id known.
 */
export const siteEnvironmentsSchema = z
  .strictObject({
    releases: z.array(releaseSchema, { error: 'releases must be a list' }).default([]),
    environments: z.array(environmentSchema, { error: 'environments must be a list' }).default([]),
  })
  .superRefine((site, ctx) => {
    const duplicates = <T>(items: readonly T[], key: (item: T) => string | number, path: (i: number) => (string | number)[], what: string) => {
      const first = new Map<string | number, number>();
      items.forEach((item, i) => {
        const k = key(item);
        const seen = first.get(k);
        if (seen === undefined) first.set(k, i);
        else ctx.addIssue({ code: 'custom', path: path(i), message: `duplicate ${what} ${JSON.stringify(k)} (also at ${seen})` });
      });
    };
    duplicates(
      site.releases,
      (r) => r.id,
      (i) => ['releases', i, 'id'],
      'release id',
    );
    duplicates(
      site.environments,
      (e) => e.id,
      (i) => ['environments', i, 'id'],
      'environment id',
    );
    duplicates(
      site.environments,
      (e) => e.name,
      (i) => ['environments', i, 'name'],
      'environment name',
    );
    const nodes = site.environments.flatMap((env, e) => env.nodes.map((node, n) => ({ node, path: ['environments', e, 'nodes', n] })));
    duplicates(
      nodes,
      ({ node }) => node.id,
      (i) => [...nodes[i]!.path, 'id'],
      'node id',
    );
    duplicates(
      nodes,
      ({ node }) => node.name,
      (i) => [...nodes[i]!.path, 'name'],
      'node name',
    );
    const releases = new Set(site.releases.map((r) => r.id));
    const environments = new Set(site.environments.map((e) => e.id));
    site.environments.forEach((env, e) => {
      if (!releases.has(env.release_id))
        ctx.addIssue({ code: 'custom', path: ['environments', e, 'release_id'], message: `no release with id ${env.release_id}` });
      if (env.original_cluster_id !== undefined && !environments.has(env.original_cluster_id)) {
        ctx.addIssue({ code: 'custom', path: ['environments', e, 'original_cluster_id'], message: `no environment with id ${env.original_cluster_id}` });
      }
    });
  });

export type SiteEnvironments = z.output<typeof siteEnvironmentsSchema>;
