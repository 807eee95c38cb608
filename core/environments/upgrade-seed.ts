import { InvalidInputError, ResourceConflictError, UpgradeConflictError, UpgradeNotAllowedError } from '../errors';
import { maskTree, upgradeAttributes } from './attributes';
import type { CloneRequest, Environment, EnvironmentNode, Release } from './schemas';

/** A seed before the store gives it an id. */
export type SeedDraft = Omit<Environment, 'id'> & { original_cluster_id: number };

/** Fuel's environment version of a release: what follows the last '-' ("2015.1.0-7.0" -> [7, 0]); undefined if not dotted numbers. */
function environmentVersion(release: Release): number[] | undefined {
  const tail = release.version.slice(release.version.lastIndexOf('-') + 1);
  return /^\d+(\.\d+)*$/.test(tail) ? tail.split('.').map(Number) : undefined;
}

/** Whether `target` is newer than `current` by their environment versions; undefined when either cannot be read. */
export function isNewerRelease(target: Release, current: Release): boolean | undefined {
  const [a, b] = [environmentVersion(target), environmentVersion(current)];
  if (!a || !b) return undefined;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) return diff > 0;
  }
  return false;
}

/** Nailgun's AlreadyExists for a seed's name: a 409 naming `name` when an environment has it already. */
export function checkSeedName(name: string, environments: readonly Environment[]): void {
  const holder = environments.find((env) => env.name === name);
  if (holder) throw new ResourceConflictError(`upgrade seed '${name}'`, [{ field: 'name', message: `environment ${holder.id} is named '${name}' already` }]);
}

/**
 * Fuel's upgrade seed: a new environment on the target release with the original's editable and
 * generated attributes, upgraded by the release's attributeChanges, and no nodes yet.
 * `existingSeed`: the original's seed per the upgrade relation, if it has one. `originalRelease`,
 * when known: as Nailgun, a release equal to or older than it is refused (naming release_id).
 */
export function cloneEnvironment(
  original: Environment,
  target: Release,
  request: CloneRequest,
  existingSeed: number | undefined,
  originalRelease?: Release,
): SeedDraft {
  if (original.original_cluster_id !== undefined) {
    throw new UpgradeNotAllowedError(`environment ${original.id} is itself the upgrade seed of environment ${original.original_cluster_id}`);
  }
  if (existingSeed !== undefined)
    throw new UpgradeNotAllowedError(`environment ${original.id} is already being upgraded: its upgrade seed is environment ${existingSeed}`);
  const older = target.id === original.release_id || (originalRelease !== undefined && isNewerRelease(target, originalRelease) === false);
  if (older) {
    const current = originalRelease ? `release ${originalRelease.id} (${originalRelease.version})` : `release ${original.release_id}`;
    throw new InvalidInputError(`upgrade of environment ${original.id}`, [
      { field: 'release_id', message: `release ${target.id} (${target.version}) is not newer than ${current}, which environment ${original.id} runs` },
    ]);
  }
  const { attributes, removedButSet, renameConflicts } = upgradeAttributes(original.attributes, target.attributeChanges);
  if (removedButSet.length > 0 || renameConflicts.length > 0) {
    throw new UpgradeConflictError(`environment ${original.id} cannot be upgraded to release ${target.id} (${target.name} ${target.version})`, [
      ...removedButSet.map((path) => ({
        field: `attributes.${path}`,
        message: `is set in environment ${original.id} but release ${target.id} removes it with no rename`,
      })),
      ...renameConflicts.map(({ path, message }) => ({ field: `attributes.${path}`, message })),
    ]);
  }
  return { name: request.name, release_id: target.id, status: 'new', attributes, nodes: [], original_cluster_id: original.id };
}

/**
 * Fuel's direct assignment, checked: the node must be in the seed's original environment (405
 * otherwise) and each of its roles defined in the seed's release (409). The move itself is the
 * store's one conditional write; the node keeps its id, roles and addresses.
 */
export function checkAssignment(seed: Environment, seedRelease: Release, holder: { node: EnvironmentNode; clusterId: number }): { from: number } {
  const originalId = seed.original_cluster_id;
  if (originalId === undefined) {
    throw new UpgradeNotAllowedError(
      `environment ${seed.id} is not an upgrade seed: only nodes of a seed's original environment can be assigned to it`,
      'node_id',
    );
  }
  const { node, clusterId } = holder;
  if (clusterId !== originalId) {
    const where = clusterId === seed.id ? 'it is in the seed already' : `it is in environment ${clusterId}`;
    throw new UpgradeNotAllowedError(
      `node ${node.id} does not belong to environment ${originalId}, the original of upgrade seed ${seed.id}: ${where}`,
      'node_id',
    );
  }
  const undefinedRoles = node.roles.filter((role) => !seedRelease.roles.includes(role));
  if (undefinedRoles.length > 0) {
    throw new UpgradeConflictError(
      `node ${node.id} cannot join upgrade seed ${seed.id}`,
      undefinedRoles.map((role) => ({
        field: 'roles',
        message: `role '${role}' of node ${node.id} is not defined in release ${seedRelease.id} (${seedRelease.name} ${seedRelease.version})`,
      })),
    );
  }
  return { from: originalId };
}

/** An environment as the API returns it: generated attributes (service credentials) masked. */
export function maskEnvironment(environment: Environment): Environment {
  return { ...environment, attributes: { ...environment.attributes, generated: maskTree(environment.attributes.generated) } };
}
