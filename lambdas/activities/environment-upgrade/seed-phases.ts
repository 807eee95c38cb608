import { upgradeInPhase, checkAssignment, cloneEnvironment, withMessages, type EnvironmentNode } from '../../../core/environments';
import { EnvironmentResourceNotFoundError, InvalidInputError, StaleWriteError, UpgradeNotAllowedError } from '../../../core/errors';
import type { EnvironmentUpgradeDependencies } from './dependencies';
import { setEnvironmentStatus, type PhaseBody } from './phase-runner';

async function environmentOf(deps: EnvironmentUpgradeDependencies, id: number) {
  const stored = await deps.environments.getEnvironment(id);
  if (!stored) throw new EnvironmentResourceNotFoundError('environment', id);
  return stored.environment;
}

async function releaseOf(deps: EnvironmentUpgradeDependencies, id: number) {
  const release = await deps.environments.getRelease(id);
  if (!release) throw new EnvironmentResourceNotFoundError('release', id, 'release_id');
  return release;
}

/** CLONING: the upgrade seed, unless the environment has one (a retried increment finds the one it made). */
export const cloneSeed: PhaseBody = async ({ session, deps, now }) => {
  const { environmentId } = session;
  let seedId = await deps.environments.seedOf(environmentId);
  if (seedId === undefined) {
    const target = await releaseOf(deps, session.releaseId!);
    const original = await environmentOf(deps, environmentId);
    const draft = cloneEnvironment(
      original,
      target,
      { name: session.request!.name!, release_id: target.id },
      undefined,
      await deps.environments.getRelease(original.release_id),
    );
    try {
      seedId = (await deps.environments.createSeed(draft)).id;
    } catch (err) {
      // A clone through the API won the relation meanwhile: that seed is the environment's, so it is this upgrade's.
      if (!(err instanceof UpgradeNotAllowedError)) throw err;
      seedId = await deps.environments.seedOf(environmentId);
      if (seedId === undefined) throw err;
    }
  }
  const seed = await environmentOf(deps, seedId);
  if (seed.release_id !== session.releaseId) {
    throw new InvalidInputError('environment upgrade', [
      { field: 'release_id', message: `upgrade seed ${seedId} of environment ${environmentId} is on release ${seed.release_id}, not ${session.releaseId}` },
    ]);
  }
  await setEnvironmentStatus(deps, seedId, 'deployment');
  const next = upgradeInPhase({ ...session, progress: { ...session.progress, seedId } }, 'ASSIGNING', now);
  return {
    session: withMessages(
      next,
      `Upgrade seed ${seedId} '${seed.name}' on release ${seed.release_id}: attributes copied and upgraded from environment ${environmentId}`,
    ),
    waitSeconds: 0,
  };
};

/** Whether the session's request counts this node as a controller. */
export const isController = (roles: readonly string[]) => (node: EnvironmentNode) => node.roles.some((role) => roles.includes(role));

/** ASSIGNING: every controller of the original moves into the seed, one conditional write each (one already there stays). */
export const assignControllers: PhaseBody = async ({ session, deps, now }) => {
  const seedId = session.progress.seedId!;
  const seed = await environmentOf(deps, seedId);
  const release = await releaseOf(deps, seed.release_id);
  const original = await environmentOf(deps, session.environmentId);
  const controller = isController(session.request!.controller_roles);
  const moved: EnvironmentNode[] = [];
  for (const node of original.nodes.filter(controller)) {
    const held = await deps.environments.getNode(node.id);
    if (!held || held.clusterId === seedId) continue;
    const { from } = checkAssignment(seed, release, held);
    try {
      moved.push(await deps.environments.moveNode(node.id, from, seedId));
    } catch (err) {
      if (!(err instanceof StaleWriteError) || (await deps.environments.getNode(node.id))?.clusterId !== seedId) throw err;
    }
  }
  const controllers = [...seed.nodes, ...moved].filter(controller);
  if (controllers.length === 0) {
    throw new InvalidInputError('environment upgrade', [
      { field: 'controller_roles', message: `neither environment ${session.environmentId} nor its seed ${seedId} has a controller any more` },
    ]);
  }
  const note =
    moved.length > 0
      ? `Assigned controller(s) ${moved.map((n) => `${n.id} '${n.name}'`).join(', ')} to upgrade seed ${seedId}`
      : `The controllers are in upgrade seed ${seedId} already`;
  return { session: withMessages(upgradeInPhase(session, 'CONTROLLERS', now), note), waitSeconds: 0 };
};
