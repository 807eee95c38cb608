import type { FieldProblem } from '../errors';
import type { Environment, Release } from './schemas';

/**
 * What registering `environment` (POST /environments, `rollout env import`) would break among the
 * stored ones, as the site file's cross checks see it: `invalid` for the request itself (a release or
 * original that does not exist, a node id or name twice), `conflicts` for what another environment
 * holds (a node, a node name, its own name, the original's one seed). An environment of the same id is the store's to compare.
 */
export function registrationProblems(
  environment: Environment,
  stored: { releases: readonly Release[]; environments: readonly Environment[] },
): { invalid: FieldProblem[]; conflicts: FieldProblem[] } {
  const invalid: FieldProblem[] = [];
  const conflicts: FieldProblem[] = [];
  if (!stored.releases.some((release) => release.id === environment.release_id))
    invalid.push({ field: 'release_id', message: `no release with id ${environment.release_id}` });
  const { original_cluster_id: originalId } = environment;
  if (originalId !== undefined) {
    const original = stored.environments.find((env) => env.id === originalId);
    if (originalId === environment.id || !original)
      invalid.push({ field: 'original_cluster_id', message: `no environment with id ${originalId} to be the original of` });
    const otherSeed = stored.environments.find((env) => env.original_cluster_id === originalId && env.id !== environment.id);
    if (otherSeed) conflicts.push({ field: 'original_cluster_id', message: `environment ${originalId} already has upgrade seed ${otherSeed.id}` });
  }
  const sameName = stored.environments.find((env) => env.id !== environment.id && env.name === environment.name);
  if (sameName) conflicts.push({ field: 'name', message: `environment ${sameName.id} is named '${environment.name}' already` });
  const others = stored.environments.filter((env) => env.id !== environment.id).flatMap((env) => env.nodes.map((node) => ({ env: env.id, node })));
  const seenIds = new Set<number>();
  const seenNames = new Set<string>();
  environment.nodes.forEach((node, i) => {
    if (seenIds.has(node.id)) invalid.push({ field: `nodes[${i}].id`, message: `node ${node.id} is listed twice` });
    if (seenNames.has(node.name)) invalid.push({ field: `nodes[${i}].name`, message: `'${node.name}' is listed twice` });
    seenIds.add(node.id);
    seenNames.add(node.name);
    const sameId = others.find((other) => other.node.id === node.id);
    if (sameId) conflicts.push({ field: `nodes[${i}].id`, message: `node ${node.id} belongs to environment ${sameId.env}` });
    const sameName = others.find((other) => other.node.name === node.name && other.node.id !== node.id);
    if (sameName) conflicts.push({ field: `nodes[${i}].name`, message: `'${node.name}' is node ${sameName.node.id} of environment ${sameName.env}` });
  });
  return { invalid, conflicts };
}
