import { InvalidInputError } from '../../core/errors';
import { parseUpgradeRequest, unsupportedControls, type UpgradeRequest } from '../../core/rolling-upgrade/upgrade-request';
import type { Site } from '../../ports/site';

/** The parts of a site the checks read. */
type UpgradeRequestSite = Pick<Site, 'bootService' | 'commands' | 'reservations'> & { inventory?: Pick<Site['inventory'], 'labelProblem'> };

/**
 * A new request read from its JSON: CRUS's 422 cases, and no control the mode refuses. The API reads
 * it once at its edge; Open Session reads its own input again (the console and EventBridge start the
 * workflow with raw JSON too).
 */
export function readUpgradeRequest(input: unknown): UpgradeRequest {
  const request = parseUpgradeRequest(input);
  const unsupported = unsupportedControls(request);
  if (unsupported.length > 0) throw new InvalidInputError('upgrade request', unsupported);
  return request;
}

/** What only the site can tell of a request read already: its labels, the transports its controls need, the boot template. */
export async function checkUpgradeRequestOnSite(request: UpgradeRequest, site: UpgradeRequestSite): Promise<void> {
  // The inventory's own label rule (HSM's), each label named by its field.
  const labelProblems = (['startingLabel', 'upgradingLabel', 'failedLabel'] as const).flatMap((field) => {
    const message = site.inventory?.labelProblem?.(request[field]);
    return message ? [{ field, message }] : [];
  });
  if (labelProblems.length > 0) throw new InvalidInputError('upgrade request', labelProblems);
  if (request.healthCheck?.command !== undefined && !site.commands) {
    throw new InvalidInputError('upgrade request', [
      { field: 'healthCheck.command', message: "the site has no command transport to run it on (a site profile's `transport`: ssm or local)" },
    ]);
  }
  if (request.reserveSlots && !site.reservations) {
    throw new InvalidInputError('upgrade request', [
      {
        field: 'reserveSlots',
        message:
          "the site has no way to make Slurm reservations: it needs a command transport to the head node (a site profile's `transport`: ssm or local) and a Slurm workload manager",
      },
    ]);
  }
  if (!(await site.bootService.templateExists(request.upgradeTemplateId))) {
    throw new InvalidInputError('upgrade request', [
      { field: 'upgradeTemplateId', message: `boot template '${request.upgradeTemplateId}' does not exist${await templatesThere(site.bootService)}` },
    ]);
  }
}

/** `: the boot service has cos-2.3, cos-2.4`, or nothing when it does not say (the refusal stands without it). */
async function templatesThere(bootService: UpgradeRequestSite['bootService']): Promise<string> {
  const names = await bootService.templateNames?.().catch(() => undefined);
  if (!names || names.length === 0) return '';
  const listed = names.length > 20 ? [...names.slice(0, 20), `... (${names.length} in all)`] : names;
  return `: the boot service has ${listed.join(', ')}`;
}

/** A new request validated in full, from its JSON to the site: what Open Session runs on its input. */
export async function checkUpgradeRequest(input: unknown, site: UpgradeRequestSite): Promise<UpgradeRequest> {
  const request = readUpgradeRequest(input);
  await checkUpgradeRequestOnSite(request, site);
  return request;
}
