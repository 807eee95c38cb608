import { InvalidInputError, type FieldProblem } from '../../core/errors';
import type { Inventory } from '../../ports/site';

export interface UpgradeLabels {
  startingLabel: string;
  upgradingLabel: string;
  failedLabel: string;
}

/**
 * The groups an upgrade names, checked through the site's inventory before it starts, by the CLI and
 * the REST API alike. The workflow keeps CRUS's semantics for a missing group (a message, then retries
 * until the group appears), so a mistyped label would otherwise wait for ever: refused (naming the
 * field and the label) unless the caller asks to wait. A label that differs from an existing one only
 * in case is refused either way, naming both: it is a typo, not a group that is coming. Site errors
 * pass through (the caller decides whether the check waits for the site or falls to the workflow).
 */
export async function checkUpgradeGroups(
  inventory: Pick<Inventory, 'getGroupMembers' | 'listGroupLabels'>,
  labels: UpgradeLabels,
  waitForGroups: boolean,
): Promise<void> {
  // Just the three labels, whatever else the object carries (a whole request).
  const named = { startingLabel: labels.startingLabel, upgradingLabel: labels.upgradingLabel, failedLabel: labels.failedLabel };
  const wanted = [...new Set(Object.values(named))];
  const present = new Set<string>();
  for (const label of wanted) {
    const found = await inventory.getGroupMembers(label).then(
      () => true,
      (err: unknown) => {
        if ((err as { name?: unknown }).name === 'GroupNotFoundError') return false;
        throw err;
      },
    );
    if (found) present.add(label);
  }
  if (present.size === wanted.length) return;
  const all = inventory.listGroupLabels ? await inventory.listGroupLabels() : undefined;
  const problems: FieldProblem[] = [];
  for (const [field, label] of Object.entries(named)) {
    if (present.has(label)) continue;
    const variant = all?.find((other) => other !== label && other.toLowerCase() === label.toLowerCase());
    if (variant !== undefined) {
      problems.push({ field, message: `no group '${label}' in the site's inventory, but there is '${variant}' (labels are case-sensitive)` });
    } else if (!waitForGroups) {
      problems.push({ field, message: `no group '${label}' in the site's inventory (create it first, or ask to wait until it exists: waitForGroups)` });
    }
  }
  if (problems.length > 0) throw new InvalidInputError('upgrade request', problems);
}
