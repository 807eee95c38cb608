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
      { id: 1, name: 'Kilo on Ubuntu 14.04', version: '2015.1.0-7.0', roles: ['controller', 'compute', 'cinder', 'mongo'] },
      {
        id: 2,
        name: 'Liberty on Ubuntu 14.04',
        version: 'liberty-8.0',
        roles: ['controller', 'compute', 'cinder'],
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

/** A simulated site of `count` compute nodes that also declares fuelEnvironments(). */
export function buildSiteWithEnvironments(count = 2): SiteDefinition {
  return parseSiteDefinition({ ...buildSite(count), ...fuelEnvironments() });
}
