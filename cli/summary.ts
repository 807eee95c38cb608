import { compressHostlist } from '../core/site/hostlist';
import { bothNames } from '../core/site/node-names';
import { formatDuration, formatOffset, formatWallInstant } from '../core/time-format';
import type { NodeReport, SessionReport } from '../control-plane/reports/session-report';

/**
 * An instant of the session's clock as a person should read it: a wall-clock date (UTC), or, on
 * simulated time, the offset from the session's start (a simulated instant is not a date).
 */
export function formatInstant(at: string, report: Pick<SessionReport, 'timeBase' | 'createdAt'>): string {
  if (report.timeBase === 'simulated') return formatOffset(Math.max(0, (Date.parse(at) - Date.parse(report.createdAt)) / 1000));
  return formatWallInstant(at);
}

/** Nodes in flight listed in the summary at most (the rest are counted). */
const MAX_LISTED_IN_FLIGHT = 20;

/** The human summary of a finished (or inspected) session. */
export function renderSessionSummary(
  report: SessionReport,
  extra: { realSeconds?: number; simulatedSeconds?: number; resumeCommand?: string; approveCommand?: string } = {},
): string {
  const lines: string[] = [];
  const resume = extra.resumeCommand ?? `rollout session resume ${report.upgradeId}`;
  const approve = extra.approveCommand ?? `rollout session approve ${report.upgradeId}`;
  const outcome = report.completed
    ? 'completed'
    : report.state === 'DELETED'
      ? 'cancelled'
      : report.state === 'HALTED'
        ? 'halted'
        : report.state === 'STOPPED'
          ? 'stopped'
          : report.state === 'STOPPING'
            ? 'stopping'
            : report.state === 'UPDATING'
              ? 'running'
              : 'not completed';
  lines.push(`Upgrade session ${report.upgradeId}: ${outcome} (state ${report.state})`);
  const window = report.controls.mode === 'window';
  const shape = window
    ? `${report.waves?.length ?? 0} wave(s)${report.controls.batches ? ` (batches ${report.controls.batches.join(', ')}, then the rest)` : ''}`
    : `${report.stepCount} step(s) of ${report.upgradeStepSize}`;
  lines.push(`  ${report.startingLabel} -> template ${report.upgradeTemplateId}, ${shape}, failed nodes in '${report.failedLabel}'`);
  const mode = window
    ? `mode window: at most ${report.controls.maxUnavailable ?? report.upgradeStepSize} out of service, ${report.controls.drainAhead ?? 0} drained ahead, order ${report.controls.order}`
    : 'mode lockstep';
  lines.push(`  ${mode}${report.makespanSeconds !== undefined ? `, makespan ${formatDuration(report.makespanSeconds)}` : ''}`);
  lines.push(
    `  times: ${report.timeBase === 'simulated' ? `simulated time, shown as the time since the session's start (e.g. +1h 36m)${report.wallCreatedAt ? `; created ${formatInstant(report.wallCreatedAt, { timeBase: 'wall-clock', createdAt: report.createdAt })} (wall clock)` : ''}` : 'wall clock (UTC)'}`,
  );
  if (report.haltedReason) lines.push(`  halted: ${report.haltedReason}`);
  if (report.state === 'STOPPED') lines.push(`  stopped: what was in flight finished, the rest was left as it was; carry it on with: ${resume}`);
  if (report.paused) lines.push(`  paused by its operator: no new node starts until: ${resume}`);
  if (report.awaitingApprovalOfBatch !== undefined) lines.push(`  waiting for the approval of batch ${report.awaitingApprovalOfBatch}: ${approve}`);
  else if (report.waiting && report.waiting !== 'paused') lines.push(`  waiting: ${report.waiting}`);
  if (report.estimate) lines.push(`  estimated end: ${formatInstant(report.estimate.endsAt, report)} (${report.estimate.basis})`);
  const total = Object.keys(report.nodes).length;
  const byCancel = report.failedByCancel ? ` (${report.failedByCancel} of them by the cancel's deletion rules)` : '';
  lines.push(
    `  nodes: ${total} | upgraded ${report.counts.UPGRADED} | failed ${report.counts.FAILED}${byCancel} | not started ${report.counts.NOT_STARTED}` +
      (report.counts.IN_PROGRESS > 0 ? ` | in progress ${report.counts.IN_PROGRESS}` : ''),
  );
  if (report.waves && report.waves.length > 0) {
    lines.push(`  waves: ${report.waves.map((w) => `${w.wave}: ${w.nodes} node(s)${w.failed > 0 ? `, ${w.failed} failed` : ''}`).join(' | ')}`);
  }
  if (extra.realSeconds !== undefined) {
    const simulated = extra.simulatedSeconds !== undefined ? ` (${formatDuration(extra.simulatedSeconds)} simulated)` : '';
    lines.push(`  took ${extra.realSeconds.toFixed(1)} s${simulated}`);
  }
  const inFlight = Object.entries(report.nodes).filter(([, n]) => n.status === 'IN_PROGRESS');
  if (inFlight.length > 0) {
    lines.push('', '  In flight:');
    const width = Math.max(...inFlight.map(([name]) => name.length));
    for (const [name, node] of inFlight.slice(0, MAX_LISTED_IN_FLIGHT))
      lines.push(`    ${name.padEnd(width)}  ${node.phase}${node.since ? ` since ${formatInstant(node.since, report)}` : ''}`);
    if (inFlight.length > MAX_LISTED_IN_FLIGHT) lines.push(`    ... and ${inFlight.length - MAX_LISTED_IN_FLIGHT} more`);
  }
  const failed = Object.entries(report.nodes).filter(([, n]) => n.status === 'FAILED');
  if (failed.length > 0) {
    lines.push('', '  Failed nodes:');
    const rows = failedRows(failed);
    const width = Math.max(...rows.map(([names]) => names.length));
    for (const [names, reason] of rows) lines.push(`    ${names.padEnd(width)}  ${reason}`);
  }
  const lastMessages = report.messageLog.slice(-5);
  if (lastMessages.length > 0) {
    lines.push('', `  Last messages (${report.messageLog.length} in all):`);
    for (const message of lastMessages) lines.push(`    ${formatInstant(message.at, report)}  ${message.text}`);
  }
  return lines.join('\n');
}

/** Failed nodes of one reason listed one by one up to this many; more (a lock-step cancel fails the rest of the plan) are one hostlist. */
const MAX_LISTED_PER_REASON = 3;

/**
 * The failed nodes as rows of [names, reason], in plan order: a node alone with both its names where
 * Slurm's differs (CSM: `x3000c0s19b1n0 (nid000006)`), or, for a reason more than a few share, one
 * Slurm hostlist of them with their count (`x3000c0s[1-16]b0n[0-1] (32)`).
 */
function failedRows(failed: readonly (readonly [string, NodeReport])[]): (readonly [string, string])[] {
  const byReason = new Map<string, (readonly [string, NodeReport])[]>();
  for (const entry of failed) {
    const reason = entry[1].reason ?? '';
    const same = byReason.get(reason) ?? [];
    same.push(entry);
    byReason.set(reason, same);
  }
  return [...byReason].flatMap(([reason, nodes]) =>
    nodes.length > MAX_LISTED_PER_REASON
      ? [[`${compressHostlist(nodes.map(([name]) => name))} (${nodes.length})`, reason] as const]
      : nodes.map(([name, node]) => [bothNames(name, node.wlmName), reason] as const),
  );
}
