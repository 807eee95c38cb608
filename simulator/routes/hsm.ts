import { z } from 'zod';
import type { GroupRecord } from '../models/inventory';
import type { SiteSimulator } from '../site-simulator';
import { ok, problem, readBody, type ServiceApi } from './route';

const id = z.string({ error: 'id is required' }).trim().min(1, 'id must not be empty');

const groupSchema = z.object({
  label: z.string({ error: 'label is required' }).trim().min(1, 'label must not be empty'),
  description: z.string().default(''),
  tags: z.array(z.string()).default([]),
  members: z.object({ ids: z.array(id) }).default({ ids: [] }),
});

const memberSchema = z.object({ id });

const deleted = ok({ code: 0, message: 'deleted 1 entry' });

/** HSM v2 groups, plus a flat node inventory (labels, tags, racks) for selectors. */
export function hsmApi(sim: SiteSimulator): ServiceApi {
  const inventory = sim.inventory;
  return {
    service: 'inventory',
    prefix: /^\/(hsm|inventory)\//,
    errorBody: problem,
    routes: [
      { method: 'GET', path: /^\/hsm\/v2\/groups$/, handle: () => ok(inventory.listGroups().map(toHsmGroup)) },
      {
        method: 'POST',
        path: /^\/hsm\/v2\/groups$/,
        handle: (_params, body) => {
          const { label, description, tags, members } = readBody(groupSchema, body);
          inventory.createGroup(label, members.ids, description, tags);
          return ok([{ href: `/hsm/v2/groups/${encodeURIComponent(label)}` }], 201);
        },
      },
      { method: 'GET', path: /^\/hsm\/v2\/groups\/([^/]+)$/, handle: ([label]) => ok(toHsmGroup(inventory.getGroup(label!))) },
      {
        method: 'DELETE',
        path: /^\/hsm\/v2\/groups\/([^/]+)$/,
        handle: ([label]) => {
          inventory.deleteGroup(label!);
          return deleted;
        },
      },
      {
        method: 'POST',
        path: /^\/hsm\/v2\/groups\/([^/]+)\/members$/,
        handle: ([label], body) => {
          const member = readBody(memberSchema, body);
          inventory.addMember(label!, member.id);
          return ok([{ href: `/hsm/v2/groups/${encodeURIComponent(label!)}/members/${encodeURIComponent(member.id)}` }], 201);
        },
      },
      {
        method: 'DELETE',
        path: /^\/hsm\/v2\/groups\/([^/]+)\/members\/([^/]+)$/,
        handle: ([label, member]) => {
          inventory.removeMember(label!, member!);
          return deleted;
        },
      },
      { method: 'GET', path: /^\/inventory\/v1\/nodes$/, handle: () => ok({ nodes: inventory.listNodes() }) },
    ],
  };
}

function toHsmGroup(group: GroupRecord) {
  return { label: group.label, description: group.description, tags: group.tags, members: { ids: group.members } };
}
