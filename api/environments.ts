import { assignNode, assignRequestSchema, cloneEnvironment, cloneRequestSchema, maskEnvironment } from '../core/environments';
import { EnvironmentResourceNotFoundError } from '../core/errors';
import { parseOrThrow } from '../core/validation';
import type { EnvironmentStore } from '../ports/environment-store';
import { json, type ApiRequest } from './http';
import { readJsonObject } from './problems';
import type { Route } from './router';

/** A path id: a positive whole number, as Nailgun's; anything else names no environment. */
function environmentId(text: string | undefined): number {
  const id = /^[1-9][0-9]{0,9}$/.test(text ?? '') ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(id)) throw new EnvironmentResourceNotFoundError('environment', text ?? '');
  return id;
}

/**
 * Fuel's environments and the upgrade-seed extensions of Nailgun's API (blueprint
 * nailgun-api-env-upgrade-extensions): clone (200, 400, 404, 405, 409) and assign (200, 400, 404, 405, 409).
 * Generated attributes are copied into a seed but only ever returned masked.
 */
export function environmentRoutes(store: EnvironmentStore): Route[] {
  const environment = async (id: number, field?: string) => {
    const stored = await store.getEnvironment(id);
    if (!stored) throw new EnvironmentResourceNotFoundError('environment', id, field);
    return stored;
  };
  const release = async (id: number, field?: string) => {
    const found = await store.getRelease(id);
    if (!found) throw new EnvironmentResourceNotFoundError('release', id, field);
    return found;
  };

  const clone = async (params: Record<string, string>, request: ApiRequest) => {
    const id = environmentId(params['id']);
    const body = parseOrThrow(cloneRequestSchema, readJsonObject(request.body), 'clone request');
    const { environment: original } = await environment(id);
    const target = await release(body.release_id, 'release_id');
    const draft = cloneEnvironment(original, target, body, await store.seedOf(id));
    return json(200, maskEnvironment(await store.createSeed(draft)));
  };

  const assign = async (params: Record<string, string>, request: ApiRequest) => {
    const seedId = environmentId(params['id']);
    const body = parseOrThrow(assignRequestSchema, readJsonObject(request.body), 'assign request');
    const seed = await environment(seedId);
    const holder = await store.findNode(body.node_id);
    if (!holder) throw new EnvironmentResourceNotFoundError('node', body.node_id, 'node_id');
    const originalId = seed.environment.original_cluster_id;
    const original = originalId === undefined ? undefined : await store.getEnvironment(originalId);
    const moved = assignNode(seed.environment, original?.environment, await release(seed.environment.release_id), body.node_id);
    // No transactions: the seed first, then the original; if the original moved on meanwhile, the
    // seed is put back, so that the node is never in neither (nor, unless that undo fails, in both).
    await store.replaceEnvironment(moved.seed, seed.revision);
    try {
      await store.replaceEnvironment(moved.original, original!.revision);
    } catch (err) {
      await store.replaceEnvironment(seed.environment, seed.revision + 1);
      throw err;
    }
    return json(200, { ...moved.node, cluster_id: seedId });
  };

  return [
    { pattern: '/environments', invalidStatus: 400, methods: { GET: async () => json(200, (await store.listEnvironments()).map(maskEnvironment)) } },
    {
      pattern: '/environments/{id}',
      invalidStatus: 400,
      methods: { GET: async ({ id }) => json(200, maskEnvironment((await environment(environmentId(id))).environment)) },
    },
    { pattern: '/environments/{id}/upgrade/clone', invalidStatus: 400, methods: { POST: clone } },
    { pattern: '/environments/{id}/upgrade/assign', invalidStatus: 400, methods: { POST: assign } },
  ];
}
