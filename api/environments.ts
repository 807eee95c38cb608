import { randomUUID } from 'node:crypto';
import {
  failedUpgrade,
  ENVIRONMENT_UPGRADE_KIND,
  assignRequestSchema,
  checkAssignment,
  checkSeedName,
  cloneEnvironment,
  cloneRequestSchema,
  environmentSchema,
  maskEnvironment,
  registrationProblems,
  releaseSchema,
} from '../core/environments';
import {
  EnvironmentResourceNotFoundError,
  InvalidInputError,
  ResourceConflictError,
  StaleWriteError,
  UpgradeConflictError,
  UpgradeNotAllowedError,
  describeError,
} from '../core/errors';
import { parseOrThrow } from '../core/validation';

import { checkOnSite, planFromStore } from '../control-plane/request-checks/environment-upgrade-request';
import type { EnvironmentStore } from '../ports/environment-store';
import type { ApiDependencies } from './dependencies';
import { json, type ApiRequest } from './http';
import { readJsonObject } from './problems';
import type { Route, RouteHandler } from './router';
import { unlessSiteFails } from './site-checks';

/** A path id: a positive whole number, as Nailgun's; anything else names no environment. */
/** Fuel's ids in a path: positive integers; any other text names no environment or release (404). */
export const NUMERIC_ID = /^[1-9][0-9]{0,9}$/;

function environmentId(text: string | undefined): number {
  const id = NUMERIC_ID.test(text ?? '') ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(id)) throw new EnvironmentResourceNotFoundError('environment', text ?? '');
  return id;
}

function releaseId(text: string | undefined): number {
  if (!NUMERIC_ID.test(text ?? '')) throw new EnvironmentResourceNotFoundError('release', text ?? '');
  return Number(text);
}

/**
 * Fuel's environments and the upgrade-seed extensions of Nailgun's API (blueprint
 * nailgun-api-env-upgrade-extensions): clone (200, 400, 404, 405, 409) and assign (200, 400, 404, 405, 409),
 * and the single-call upgrade Fuel 7.0 left unimplemented (201 a session; 404, 405, 409, 422).
 * Generated attributes are copied into a seed but only ever returned masked.
 */
export function environmentRoutes(deps: ApiDependencies): Route[] {
  const { environments: store } = deps;
  return [
    { pattern: '/releases', invalidStatus: 400, methods: { GET: async () => json(200, await store.listReleases()), POST: registerRelease(deps) } },
    { pattern: '/releases/{id}', invalidStatus: 400, methods: { GET: async ({ id }) => json(200, await storedRelease(store, releaseId(id))) } },
    {
      pattern: '/environments',
      invalidStatus: 400,
      methods: { GET: async () => json(200, (await store.listEnvironments()).map(maskEnvironment)), POST: registerEnvironment(deps) },
    },
    {
      pattern: '/environments/{id}',
      invalidStatus: 400,
      methods: {
        GET: async ({ id }) => json(200, maskEnvironment((await storedEnvironment(store, environmentId(id))).environment)),
        DELETE: removeEnvironment(deps),
      },
    },
    { pattern: '/environments/{id}/upgrade/clone', invalidStatus: 400, methods: { POST: clone(deps) } },
    { pattern: '/environments/{id}/upgrade/assign', invalidStatus: 400, methods: { POST: assign(deps) } },
    // A session is created, as POST /sessions creates one: CRUS's 422 for fields that are wrong.
    { pattern: '/environments/{id}/upgrade', invalidStatus: 422, methods: { POST: upgrade(deps) } },
  ];
}

/** The stored environment of `id`, or EnvironmentResourceNotFoundError naming `field` (404). */
async function storedEnvironment(store: EnvironmentStore, id: number, field?: string) {
  const stored = await store.getEnvironment(id);
  if (!stored) throw new EnvironmentResourceNotFoundError('environment', id, field);
  return stored;
}

/** The release of `id`, or EnvironmentResourceNotFoundError naming `field` (404). */
async function storedRelease(store: EnvironmentStore, id: number, field?: string) {
  const found = await store.getRelease(id);
  if (!found) throw new EnvironmentResourceNotFoundError('release', id, field);
  return found;
}

function clone({ environments: store }: ApiDependencies): RouteHandler {
  return async (params: Record<string, string>, request: ApiRequest) => {
    const id = environmentId(params['id']);
    const body = parseOrThrow(cloneRequestSchema, readJsonObject(request.body), 'clone request');
    const { environment: original } = await storedEnvironment(store, id);
    const target = await storedRelease(store, body.release_id, 'release_id');
    const draft = cloneEnvironment(original, target, body, await store.seedOf(id), await store.getRelease(original.release_id));
    checkSeedName(draft.name, await store.listEnvironments());
    return json(200, maskEnvironment(await store.createSeed(draft)));
  };
}

function assign({ environments: store }: ApiDependencies): RouteHandler {
  return async (params: Record<string, string>, request: ApiRequest) => {
    const seedId = environmentId(params['id']);
    const body = parseOrThrow(assignRequestSchema, readJsonObject(request.body), 'assign request');
    const { environment: seed } = await storedEnvironment(store, seedId);
    const held = await store.getNode(body.node_id);
    if (!held) throw new EnvironmentResourceNotFoundError('node', body.node_id, 'node_id');
    const { from } = checkAssignment(seed, await storedRelease(store, seed.release_id), held);
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
}

/**
 * Everything the request and the stored environments tell is checked before the answer, and what
 * the site tells too when it answers (a site that fails leaves those checks to the workflow, whose
 * session then says why it stopped). The session is stored and the environment claimed here, as
 * CRUS stores a session before it answers: the Location never 404s, and of two concurrent
 * upgrades of one environment one gets the 201, the other a 409.
 */
function upgrade({ environments: store, environmentUpgrades, controlPlane, site }: ApiDependencies): RouteHandler {
  return async (params: Record<string, string>, request: ApiRequest) => {
    const id = environmentId(params['id']);
    const body = readJsonObject(request.body);
    const plan = await planFromStore(store, id, body);
    await unlessSiteFails(site && (() => checkOnSite(site, plan)));
    const executionName = randomUUID();
    const upgradeId = controlPlane.environmentUpgradeId(executionName);
    const now = controlPlane.now();
    const accepted = `Accepted: upgrade of environment ${id} to release ${plan.target.id}`;
    const { session, revision } = await environmentUpgrades.createUpgrade({
      upgradeId,
      kind: ENVIRONMENT_UPGRADE_KIND,
      environmentId: id,
      state: 'UPDATING',
      completed: false,
      createdAt: new Date(now).toISOString(),
      ...(controlPlane.simulatedTime ? { simulatedTime: true, wallCreatedAt: new Date().toISOString() } : {}),
      progress: { phase: 'CLONING', phaseStartedAt: now, errorCount: 0 },
      messages: [accepted],
    });
    const holder = await environmentUpgrades.claimEnvironment(id, upgradeId);
    if (holder !== undefined) {
      await environmentUpgrades.deleteUpgrade(upgradeId);
      throw new UpgradeConflictError(`environment ${id} cannot be upgraded now`, [{ field: '', message: `environment upgrade ${holder} is upgrading it` }]);
    }
    let started;
    try {
      started = await controlPlane.startEnvironmentUpgrade({ environmentId: id, request: body }, executionName);
    } catch (err) {
      await environmentUpgrades.saveUpgrade(
        failedUpgrade(session, 'StartExecutionFailed', [{ field: '', message: `the workflow could not be started: ${describeError(err)}` }], now),
        revision,
      );
      throw err;
    }
    return json(
      201,
      { id: upgradeId, kind: 'environment-upgrade', executionArn: started.executionArn },
      { location: `/sessions/${encodeURIComponent(upgradeId)}` },
    );
  };
}

/**
 * Registration, for a stack or a `rollout serve --site-config` that has no site file to seed from
 * (`rollout env import FILE`): the site file's schemas and cross checks, and the site's boot service
 * and inventory when they answer. 201 created, 200 the same stored already, 409 another stored or held.
 */
function registerRelease({ environments: store, site }: ApiDependencies): RouteHandler {
  return async (_params: Record<string, string>, request: ApiRequest) => {
    const release = parseOrThrow(releaseSchema, readJsonObject(request.body), 'release');
    await unlessSiteFails(async () => {
      if (site && !(await site.bootService.templateExists(release.bootTemplate))) {
        throw new InvalidInputError('release', [
          { field: 'bootTemplate', message: `boot template '${release.bootTemplate}' does not exist in the boot service` },
        ]);
      }
    });
    const outcome = await store.addRelease(release);
    return json(outcome === 'created' ? 201 : 200, release, outcome === 'created' ? { location: `/releases/${release.id}` } : {});
  };
}

function registerEnvironment({ environments: store, site }: ApiDependencies): RouteHandler {
  return async (_params: Record<string, string>, request: ApiRequest) => {
    const environment = parseOrThrow(environmentSchema, readJsonObject(request.body), 'environment');
    const { invalid, conflicts } = registrationProblems(environment, { releases: await store.listReleases(), environments: await store.listEnvironments() });
    await unlessSiteFails(async () => {
      if (!site) return;
      const known = new Set((await site.inventory.listNodes()).map((node) => node.name));
      environment.nodes.forEach((node, i) => {
        if (!known.has(node.name)) invalid.push({ field: `nodes[${i}].name`, message: `'${node.name}' is not a node of the site's inventory` });
      });
    });
    if (invalid.length > 0) throw new InvalidInputError('environment', invalid);
    if (conflicts.length > 0) throw new ResourceConflictError(`environment ${environment.id}`, conflicts);
    const outcome = await store.addEnvironment(environment);
    const stored = (await store.getEnvironment(environment.id))!.environment;
    return json(outcome === 'created' ? 201 : 200, maskEnvironment(stored), outcome === 'created' ? { location: `/environments/${environment.id}` } : {});
  };
}

/**
 * Fuel's DELETE /clusters/{id}, done at once: the environment's nodes leave it (their site nodes can be
 * registered again), its name and upgrade relations are released. 409 while an environment upgrade of it,
 * or of the original it is the seed of, is running (it reads both).
 */
function removeEnvironment({ environments: store, environmentUpgrades }: ApiDependencies): RouteHandler {
  return async (params: Record<string, string>) => {
    const id = environmentId(params['id']);
    // One whose delete did not finish (a crash) is no longer listed: the store finishes it.
    const stored = (await store.getEnvironment(id))?.environment;
    const upgradedBy = stored ? [id, ...(stored.original_cluster_id === undefined ? [] : [stored.original_cluster_id])] : [];
    for (const upgraded of upgradedBy) {
      const running = await environmentUpgrades.activeUpgradeOf(upgraded);
      if (running !== undefined) {
        throw new UpgradeConflictError(`environment ${id} cannot be deleted now`, [
          { field: '', message: `environment upgrade ${running} of environment ${upgraded} is running: delete it once that has ended` },
        ]);
      }
    }
    await store.deleteEnvironment(id);
    return json(200, { id, removed: true });
  };
}
