import type { HealthCheckResult } from '../../../core/rolling-upgrade/health-check';
import type { NodeRecord } from '../../../core/rolling-upgrade/session';
import { describeError, SiteServiceError } from '../../../core/errors';
import { fillTemplate } from '../../../core/site/shell-quote';
import { healthCheckComment } from '../../../core/site/command-end-event';
import type { RollingUpgradeDependencies } from './dependencies';

/** Statuses a command transport reports for a command that ended without an exit code of its own. */
const ENDED_WITHOUT_EXIT = new Set(['Cancelled', 'Failed']);

/**
 * One look at the health check command of each node in phase CHECKING, on the site's command
 * transport: running, passed (exit 0), failed (another exit code, or the transport timed it out), or
 * lost (the transport does not know the command any more: it is started again).
 */
export async function observeHealthChecks(deps: RollingUpgradeDependencies, records: readonly NodeRecord[]): Promise<Map<string, HealthCheckResult>> {
  const checking = records.filter((r) => r.phase === 'CHECKING' && r.check?.id);
  const results = new Map<string, HealthCheckResult>();
  if (checking.length === 0) return results;
  const commands = siteCommands(deps);
  await Promise.all(
    checking.map(async (record) => {
      try {
        const result = await commands.poll(record.check!.id);
        if (!result) results.set(record.name, { state: 'running' });
        else if (result.exitCode === 0) results.set(record.name, { state: 'passed' });
        else results.set(record.name, { state: 'failed', detail: `exit ${result.exitCode}${firstLine(result.stdout, result.stderr)}` });
      } catch (err) {
        // The transport's CommandTransportError carries the command's status when it ended (TimedOut, ...).
        const status = (err as { details?: { status?: string } }).details?.status;
        if (status === 'TimedOut') results.set(record.name, { state: 'timed-out' });
        else if (status !== undefined && ENDED_WITHOUT_EXIT.has(status))
          results.set(record.name, { state: 'failed', detail: `${status}: ${describeError(err)}` });
        else results.set(record.name, { state: 'lost', detail: describeError(err) });
      }
    }),
  );
  return results;
}

/**
 * Starts the health check command of a node: `{node}` is its name, quoted. Returns the transport's id of the command.
 * Its tag (SSM's Comment) names the session and the node: what maps SSM's notification of its end back to the
 * session's wait (core/site/command-end-event.ts).
 */
export async function startHealthCheck(
  deps: RollingUpgradeDependencies,
  session: string,
  command: string,
  node: string,
  timeoutSeconds: number,
): Promise<string> {
  const tag = healthCheckComment(session, node);
  return siteCommands(deps).start(fillTemplate(command, { node }), { timeoutSeconds, ...(tag ? { tag } : {}) });
}

function siteCommands(deps: RollingUpgradeDependencies) {
  // Open Session refuses healthCheck.command for a site without a command transport; a site changed under a running session lands here.
  if (!deps.site.commands) throw new SiteServiceError('workload-manager', "healthCheck.command needs the site's command transport, and this site has none");
  return deps.site.commands;
}

function firstLine(stdout: string, stderr: string): string {
  const line = `${stdout}\n${stderr}`
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  return line ? `: ${line.slice(0, 200)}` : '';
}
