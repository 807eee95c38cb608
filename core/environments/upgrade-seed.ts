import { UpgradeConflictError, UpgradeNotAllowedError } from '../errors';
import { maskTree, upgradeAttributes } from './attributes';
import type { CloneRequest, Environment, EnvironmentNode, Release } from './schemas';

/** A seed before the store gives it an id. */
export type SeedDraft = Omit<Environment, 'id'> & { original_cluster_id: number };

/**
 * Fuel's upgrade seed: a new environment on the target release with the original's editable and
 * generated attributes, upgraded by the release's attributeChanges, and no nodes yet.
 * `existingSeed`: the original's seed per the upgrade relation, if it has one.
 */
export function cloneEnvironment(original: Environment, target: Release, request: CloneRequest, existingSeed: number | undefined): SeedDraft {
  if (original.original_cluster_id !== undefined) {
    throw new UpgradeNotAllowedError(`environment ${original.id} is itself the upgrade seed of environment ${original.original_cluster_id}`);
  }
  if (existingSeed !== undefined) throw new UpgradeNotAllowedError(`environment ${original.id} is already being upgraded: its upgrade seed is environment ${existingSeed}`);
  const { attributes, removedButSet } = upgradeAttributes(original.attributes, target.attributeChanges);
  if (removedButSet.length > 0) {
    throw new UpgradeConflictError(
      `environment ${original.id} cannot be upgraded to release ${target.id} (${target.name} ${target.version})`,
      removedButSet.map((path) => ({ field: `attributes.${path}`, message: `is set in environment ${original.id} but release ${target.id} removes it with no rename` })),
    );
  }
  return { name: request.name, release_id: target.id, status: 'new', attributes, nodes: [], original_cluster_id: original.id };
}

/**
 * Fuel's direct assignment: the node moves from the seed's original to the seed with its id, roles
 * and addresses. Returns both environments as they are after the move.
 */
export function assignNode(
  seed: Environment,
  original: Environment | undefined,
  seedRelease: Release,
  nodeId: number,
): { seed: Environment; original: Environment; node: EnvironmentNode } {
  if (seed.original_cluster_id === undefined || original === undefined) {
    throw new UpgradeNotAllowedError(`environment ${seed.id} is not an upgrade seed: only nodes of a seed's original environment can be assigned to it`, 'node_id');
  }
  const node = original.nodes.find((n) => n.id === nodeId);
  if (!node) throw new UpgradeNotAllowedError(`node ${nodeId} does not belong to environment ${original.id}, the original of upgrade seed ${seed.id}`, 'node_id');
  const undefinedRoles = node.roles.filter((role) => !seedRelease.roles.includes(role));
  if (undefinedRoles.length > 0) {
    throw new UpgradeConflictError(
      `node ${nodeId} cannot join upgrade seed ${seed.id}`,
      undefinedRoles.map((role) => ({ field: 'roles', message: `role '${role}' of node ${nodeId} is not defined in release ${seedRelease.id} (${seedRelease.name} ${seedRelease.version})` })),
    );
  }
  return {
    seed: { ...seed, nodes: [...seed.nodes, node] },
    original: { ...original, nodes: original.nodes.filter((n) => n.id !== nodeId) },
    node,
  };
}

/** An environment as the API returns it: generated attributes (service credentials) masked. */
export function maskEnvironment(environment: Environment): Environment {
  return { ...environment, attributes: { ...environment.attributes, generated: maskTree(environment.attributes.generated) } };
}
