import { InvalidInputError } from '../../core/errors';
import { parseUpgradeRequest, unsupportedControls, type UpgradeRequest } from '../../core/rolling-upgrade/upgrade-request';
import type { Site } from '../../ports/site';

/**
 * A new request validated in full: CRUS's 422 cases, and the boot template must exist. The API runs
 * it before its 201 (when it reaches the site); Open Session runs it again.
 */
export async function checkUpgradeRequest(
  input: unknown,
  site: Pick<Site, 'bootService' | 'commands' | 'reservations'> & { inventory?: Pick<Site['inventory'], 'labelProblem'> },
): Promise<UpgradeRequest> {
  const request = parseUpgradeRequest(input);
  const unsupported = unsupportedControls(request);
  if (unsupported.length > 0) throw new InvalidInputError('upgrade request', unsupported);
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
    throw new InvalidInputError('upgrade request', [{ field: 'upgradeTemplateId', message: `boot template '${request.upgradeTemplateId}' does not exist` }]);
  }
  return request;
}
