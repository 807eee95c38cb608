import {
  checkSeedName,
  parseEnvironmentUpgradeRequest,
  planEnvironmentUpgrade,
  siteProblems,
  type EnvironmentUpgradePlan,
  type SiteObservation,
} from '../../core/environments';
import { EnvironmentResourceNotFoundError, GroupNotFoundError, InvalidInputError } from '../../core/errors';
import type { EnvironmentStore } from '../../ports/environment-store';
import type { Site } from '../../ports/site';

/**
 * The upgrade of environment `environmentId` as `body` asks it, checked against the stored
 * environments (404 environment or release, 405 a seed, 409 attributes or roles, 422 fields). The
 * API runs it before it answers, and the workflow's first increment again (the store may have changed).
 */
export async function planFromStore(environments: EnvironmentStore, environmentId: number, body: unknown): Promise<EnvironmentUpgradePlan> {
  const request = parseEnvironmentUpgradeRequest(body);
  const stored = await environments.getEnvironment(environmentId);
  if (!stored) throw new EnvironmentResourceNotFoundError('environment', environmentId);
  const seedId = await environments.seedOf(environmentId);
  const seed = seedId === undefined ? undefined : (await environments.getEnvironment(seedId))?.environment;
  const releaseId = seed?.release_id ?? request.release_id;
  if (releaseId === undefined) {
    throw new InvalidInputError('environment upgrade request', [
      { field: 'release_id', message: `is required: environment ${environmentId} has no upgrade seed yet, and the clone needs it` },
      ...(request.name === undefined
        ? [{ field: 'name', message: `is required: environment ${environmentId} has no upgrade seed yet, and the clone needs it` }]
        : []),
    ]);
  }
  const target = await environments.getRelease(releaseId);
  if (!target) throw new EnvironmentResourceNotFoundError('release', releaseId, 'release_id');
  const plan = planEnvironmentUpgrade(request, stored.environment, seed, target, await environments.getRelease(stored.environment.release_id));
  if (plan.seedDraft) checkSeedName(plan.seedDraft.name, await environments.listEnvironments());
  return plan;
}

/** What the site says about the plan's template, nodes and groups. */
export async function observeSite(site: Pick<Site, 'bootService' | 'inventory'>, plan: EnvironmentUpgradePlan): Promise<SiteObservation> {
  const [templateExists, inventory] = await Promise.all([site.bootService.templateExists(plan.target.bootTemplate), site.inventory.listNodes()]);
  const { startingLabel, upgradingLabel, failedLabel } = plan.rollingUpgrade;
  const groups: Record<string, readonly string[] | undefined> = {};
  for (const label of new Set([startingLabel, upgradingLabel, failedLabel])) {
    try {
      groups[label] = await site.inventory.getGroupMembers(label);
    } catch (err) {
      if (!(err instanceof GroupNotFoundError)) throw err;
      groups[label] = undefined;
    }
  }
  return { templateExists, siteNodes: new Set(inventory.map((node) => node.name)), groups };
}

/** The plan's problems on the site, as one InvalidInputError naming each (422). Site errors pass (SiteServiceError). */
export async function checkOnSite(site: Pick<Site, 'bootService' | 'inventory'>, plan: EnvironmentUpgradePlan): Promise<void> {
  const problems = siteProblems(plan, await observeSite(site, plan));
  if (problems.length > 0) throw new InvalidInputError('environment upgrade request', problems);
}
