import type { SiteEnvironments } from '../../core/environments';
import { siteEnvironmentsSchema } from '../../core/environments';
import { parseSiteDefinition, type SiteDefinition } from '../../simulator';
import { buildSite } from './sites';

/**
 * Two Fuel releases and three environments: `prod` (release 1: a controller, a compute node, a
 * mongo node whose role release 2 drops), `legacy` (sets an attribute release 2 removes) and `idle`.
 */
export function fuelEnvironments(): SiteEnvironments {
  return siteEnvironmentsSchema.parse({
    releases: [
      { id: 1, name: 'Kilo on Ubuntu 14.04', version: '2015.1.0-7.0', roles: ['controller', 'compute', 'cinder', 'mongo'], bootTemplate: 'img-1' },
      {
        id: 2,
        name: 'Liberty on Ubuntu 14.04',
        version: 'liberty-8.0',
        roles: ['controller', 'compute', 'cinder'],
        bootTemplate: 'img-2',
        attributeChanges: {
          renamed: { 'editable.common.libvirt_type': 'editable.compute.libvirt_type', 'generated.keystone.admin_token': 'generated.keystone.token' },
          removed: ['editable.storage.iser', 'editable.common.nova_quota'],
        },
      },
    ],
    environments: [
      {
        id: 1,
        name: 'prod',
        release_id: 1,
        attributes: {
          editable: { common: { libvirt_type: { value: 'kvm' }, debug: { value: false } } },
          generated: { keystone: { admin_token: 's3cret-token' }, mysql: { root_password: 'r00t' } },
        },
        nodes: [
          { id: 11, name: 'node-11', roles: ['controller'], ip: '10.20.0.11', mac: '52:54:00:00:00:11' },
          { id: 12, name: 'node-12', roles: ['compute', 'cinder'], ip: '10.20.0.12', mac: '52:54:00:00:00:12' },
          { id: 13, name: 'node-13', roles: ['mongo'], ip: '10.20.0.13', mac: '52:54:00:00:00:13' },
        ],
      },
      {
        id: 2,
        name: 'legacy',
        release_id: 1,
        attributes: { editable: { storage: { iser: { value: true } }, common: { nova_quota: { value: true } } } },
        nodes: [{ id: 21, name: 'node-21', roles: ['controller'], ip: '10.20.1.21', mac: '52:54:00:00:00:21' }],
      },
      { id: 3, name: 'idle', release_id: 1 },
    ],
  });
}

/** The site node names of fuelEnvironments()'s nodes, in id order. */
export const ENVIRONMENT_NODE_NAMES = ['node-11', 'node-12', 'node-13', 'node-21'];

/**
 * A simulated site of `count` compute nodes, plus one site node per environment node (by name, not
 * in any group), that also declares fuelEnvironments() (releases installed by templates img-1, img-2).
 */
export function buildSiteWithEnvironments(count = 2): SiteDefinition {
  const site = buildSite(count);
  const environmentNodes = ENVIRONMENT_NODE_NAMES.map((name, i) => ({ name, nid: count + i + 1 }));
  return parseSiteDefinition({ ...site, nodes: [...site.nodes, ...environmentNodes], ...fuelEnvironments() });
}

/** Environment 5 'cloud' (release 1): controllers ctl-1 and ctl-2, computes cmp-1 to cmp-3, every role one release 2 defines. */
export const CLOUD_NODES = [
  { id: 51, name: 'ctl-1', roles: ['controller'] },
  { id: 52, name: 'ctl-2', roles: ['controller'] },
  { id: 53, name: 'cmp-1', roles: ['compute'] },
  { id: 54, name: 'cmp-2', roles: ['compute', 'cinder'] },
  { id: 55, name: 'cmp-3', roles: ['compute'] },
];

/**
 * A simulated site for side-by-side upgrades: fuelEnvironments() plus environment 5 'cloud', a site
 * node per environment node, the empty groups `cloud-nodes` (the upgrade's starting group),
 * `upgrading` and `failed`, and a node `other` outside every environment. `node` adjusts site nodes by name.
 */
export function buildCloudSite(node: (name: string) => Record<string, unknown> = () => ({})): SiteDefinition {
  const environments = fuelEnvironments();
  const cloud = {
    id: 5,
    name: 'cloud',
    release_id: 1,
    attributes: { editable: { common: { libvirt_type: { value: 'kvm' } } }, generated: { mysql: { root_password: 'cl0ud' } } },
    nodes: CLOUD_NODES.map((n, i) => ({ ...n, ip: `10.30.0.${51 + i}`, mac: `52:54:00:00:01:${51 + i}` })),
  };
  const names = [...ENVIRONMENT_NODE_NAMES, ...CLOUD_NODES.map((n) => n.name), 'other'];
  return parseSiteDefinition({
    nodes: names.map((name, i) => ({ name, nid: i + 1, ...node(name) })),
    groups: { 'cloud-nodes': [], upgrading: [], failed: [], compute: ['other'] },
    bootTemplates: ['img-1', 'img-2'],
    timing: { bootSeconds: 60, returnSeconds: 10 },
    releases: environments.releases,
    environments: [...environments.environments, cloud],
  });
}

/** The upgrade request of the tests: clone 'cloud-8.0' on release 2, the others in steps of 2 through `cloud-nodes`. */
export function environmentUpgradeRequest(overrides: Record<string, unknown> = {}, rolling: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'cloud-8.0',
    release_id: 2,
    rolling_upgrade: {
      startingLabel: 'cloud-nodes',
      upgradingLabel: 'upgrading',
      failedLabel: 'failed',
      upgradeStepSize: 2,
      workloadManagerType: 'slurm',
      pollIntervalSeconds: 10,
      ...rolling,
    },
    ...overrides,
  };
}
