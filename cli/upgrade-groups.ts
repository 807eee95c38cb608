import { createSiteFromProfile } from '../adapters/site';
import { InvalidInputError, type FieldProblem } from '../core/errors';
import type { SiteSource } from '../engine/open-runtime';

export interface UpgradeLabels {
  startingLabel: string;
  upgradingLabel: string;
  failedLabel: string;
}

/**
 * The groups an upgrade names, checked through the site's inventory before it starts. The workflow
 * keeps CRUS's semantics for a missing group (a message, then retries until the group appears), so
 * a mistyped label would otherwise wait for ever: refused here (exit 2, naming the label) unless
 * the operator asks to wait. A label that differs from an existing one only in case is refused
 * either way, naming both: it is a typo, not a group that is coming.
 */
export async function checkUpgradeGroups(source: SiteSource, labels: UpgradeLabels, waitForGroups: boolean): Promise<void> {
  const groups = await groupsOf(source, Object.values(labels));
  const problems: FieldProblem[] = [];
  for (const [field, label] of Object.entries(labels)) {
    if (groups.present.has(label)) continue;
    const variant = groups.all?.find((other) => other !== label && other.toLowerCase() === label.toLowerCase());
    if (variant !== undefined) {
      problems.push({ field, message: `no group '${label}' in the site's inventory, but there is '${variant}' (labels are case-sensitive)` });
    } else if (!waitForGroups) {
      problems.push({ field, message: `no group '${label}' in the site's inventory (create it first, or give --wait-for-groups to wait until it exists)` });
    }
  }
  if (problems.length > 0) throw new InvalidInputError('upgrade request', problems);
}

interface SiteGroups {
  /** The labels asked about that exist. */
  present: Set<string>;
  /** Every label, where the inventory lists them. */
  all?: string[];
}

async function groupsOf(source: SiteSource, labels: readonly string[]): Promise<SiteGroups> {
  if (source.kind === 'simulated') {
    const all = Object.keys(source.definition.groups);
    return { present: new Set(labels.filter((label) => all.includes(label))), all };
  }
  const { inventory } = (await createSiteFromProfile(source.profile, { baseDir: source.baseDir })).site;
  const present = new Set<string>();
  for (const label of new Set(labels)) {
    const found = await inventory.getGroupMembers(label).then(
      () => true,
      (err: unknown) => {
        if ((err as { name?: unknown }).name === 'GroupNotFoundError') return false;
        throw err;
      },
    );
    if (found) present.add(label);
  }
  const all = present.size < new Set(labels).size && inventory.listGroupLabels ? await inventory.listGroupLabels() : undefined;
  return { present, ...(all ? { all } : {}) };
}
