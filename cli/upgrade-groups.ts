import { GroupNotFoundError } from '../core/errors';
import type { SiteSource } from '../local/open-runtime';
import { connectProfile } from '../local/profile-connection';
import { checkUpgradeGroups as checkGroups, type UpgradeLabels } from '../control-plane/request-checks/upgrade-groups';

/**
 * The groups an upgrade names, checked through the site's inventory before it starts (exit 2, naming
 * the label) unless the operator asks to wait (control-plane/request-checks/upgrade-groups.ts).
 */
export async function checkUpgradeGroups(source: SiteSource, labels: UpgradeLabels, waitForGroups: boolean): Promise<void> {
  if (source.kind === 'simulated') {
    // The site file's own groups: no simulated service to start for a look.
    const groups = source.definition.groups;
    const inventory = {
      getGroupMembers: async (label: string) => groups[label] ?? Promise.reject(new GroupNotFoundError(label)),
      listGroupLabels: async () => Object.keys(groups),
    };
    return checkGroups(inventory, labels, waitForGroups);
  }
  // The process's one connection to the profile's site: the run started after this check uses it too.
  const { inventory } = (await connectProfile(source)).site.site;
  return checkGroups(inventory, labels, waitForGroups);
}
