import { assignRequestSchema, checkAssignment, cloneEnvironment, cloneRequestSchema, maskEnvironment } from '../core/environments';
import { EnvironmentResourceNotFoundError, StaleWriteError, UpgradeNotAllowedError } from '../core/errors';
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
    const { environment: seed } = await environment(seedId);
    const held = await store.getNode(body.node_id);
    if (!held) throw new EnvironmentResourceNotFoundError('node', body.node_id, 'node_id');
    const { from } = checkAssignment(seed, await release(seed.release_id), held);
    // The move is one conditional write on the node's ownership: of concurrent assigns one wins,
    // and the node is in exactly one environment before, during and after.
    let node;
    try {
      node = await store.moveNode(body.node_id, from, seedId);
    } catch (err) {
      if (!(err instanceof StaleWriteError)) throw err;
      const now = await store.getNode(body.node_id);
      throw new UpgradeNotAllowedError(
        `node ${body.node_id} left environment ${from} during the request: it is in ${now?.clusterId === seedId ? 'the seed already' : `environment ${now?.clusterId}`}`,
        'node_id',
      );
    }
    return json(200, { ...node, cluster_id: seedId });
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
