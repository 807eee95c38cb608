import type { WlmNode } from '../site/site-nodes';
import { healthCheckCommand, type UpgradeRequest } from './upgrade-request';
import { FailureReason, type NodeRecord } from './session';
import type { NodeAction } from './stage-decision';
import { isBackAfterBoot } from './wlm-readiness';

/** What the site's command transport says of a node's health check command. */
export type HealthCheckResult =
  | { state: 'running' }
  | { state: 'passed' }
  | { state: 'failed'; detail: string }
  /** The transport ended it at its execution timeout (the request's timeoutSeconds). */
  | { state: 'timed-out' }
  /** The transport no longer knows the command (a local transport's process died, SSM forgot it): start it again. */
  | { state: 'lost'; detail: string };

/**
 * A booted node's way back to service (both modes): `back` once Slurm shows it back after its boot
 * and, with `healthCheck.command`, once that command passed and Slurm still shows it back; `check`
 * starts the command (the node stays drained meanwhile); `failed` with `upgrading-health-check-failed`
 * when the command exits non-zero or gives no result within its timeout; `wait` otherwise (the caller
 * applies the return-to-service timeout to nodes not back in Slurm).
 */
export type ReturnVerdict =
  | { kind: 'back' }
  | { kind: 'check' }
  | { kind: 'wait'; checking: boolean }
  | { kind: 'failed'; reason: FailureReason; detail: string };

export function returnVerdict(
  session: Pick<UpgradeRequest, 'healthCheck'>,
  record: Pick<NodeRecord, 'phase' | 'check'>,
  wlm: WlmNode | undefined,
  bootRequestedAt: number,
  check: HealthCheckResult | undefined,
  now: number,
): ReturnVerdict {
  const back = wlm !== undefined && isBackAfterBoot(wlm, bootRequestedAt);
  const command = healthCheckCommand(session);
  if (record.phase !== 'CHECKING' || !record.check || !command) {
    if (!back) return { kind: 'wait', checking: false };
    return command ? { kind: 'check' } : { kind: 'back' };
  }
  const failed = (detail: string): ReturnVerdict => ({ kind: 'failed', reason: FailureReason.healthCheckFailed, detail });
  switch (check?.state) {
    case 'passed':
      return back ? { kind: 'back' } : failed(`its health check passed, but Slurm no longer shows it back (${describeWlm(wlm)})`);
    case 'failed':
      return failed(check.detail);
    case 'lost':
      return { kind: 'check' };
    default:
      if (check?.state === 'timed-out' || now - record.check.startedAt >= command.timeoutSeconds * 1000) {
        return failed(`no result from its health check within ${command.timeoutSeconds} s`);
      }
      return { kind: 'wait', checking: true };
  }
}

/** When a node's health check in flight gives up (its start plus healthCheck.timeoutSeconds, epoch ms); undefined when none runs. */
export function checkTimesOutAt(session: Pick<UpgradeRequest, 'healthCheck'>, record: Pick<NodeRecord, 'phase' | 'check'>): number | undefined {
  const command = healthCheckCommand(session);
  return record.phase === 'CHECKING' && record.check && command ? record.check.startedAt + command.timeoutSeconds * 1000 : undefined;
}

function describeWlm(wlm: WlmNode | undefined): string {
  return wlm === undefined ? 'unknown to the workload manager' : [wlm.base, ...wlm.flags].join('+');
}

/** `x (exit 1: ERROR ...)`, for a message naming each node that failed its check and why. */
export function describeHealthFailures(failures: readonly { name: string; detail: string }[], limit = 5): string {
  const shown = failures.slice(0, limit).map((f) => `${f.name} (${f.detail})`);
  return failures.length > limit ? `${shown.join(', ')} and ${failures.length - limit} more` : shown.join(', ');
}

/** Records `nodes` CHECKING as their health check command starts (the activity fills in each command's id). */
export function startChecks(nodes: readonly NodeRecord[], command: { command: string; timeoutSeconds: number }, now: number): NodeAction {
  const records = nodes.map(({ check: _check, ...node }) => ({
    ...node,
    status: 'IN_PROGRESS' as const,
    phase: 'CHECKING' as const,
    check: { id: '', startedAt: now },
  }));
  return { type: 'startHealthChecks', command: command.command, timeoutSeconds: command.timeoutSeconds, records };
}
