import { bothNames } from '../core/site/node-names';
import type { SessionReport } from '../control-plane/reports/session-report';

/**
 * An instant of the session's clock as a person should read it: a wall-clock date (UTC), or, on
 * simulated time, the offset from the session's start (a simulated instant is not a date).
 */
export function formatInstant(at: string, report: Pick<SessionReport, 'timeBase' | 'createdAt'>): string {
  if (report.timeBase === 'simulated') return `+${clockOffset((Date.parse(at) - Date.parse(report.createdAt)) / 1000)}`;
  return at.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** `1:02:03` (h:mm:ss), or `2:03` under an hour. */
function clockOffset(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(h > 0 ? 2 : 1, '0');
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
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
    `  times: ${report.timeBase === 'simulated' ? `simulated time, shown from the session's start (+h:mm:ss)${report.wallCreatedAt ? `; created ${formatInstant(report.wallCreatedAt, { timeBase: 'wall-clock', createdAt: report.createdAt })} (wall clock)` : ''}` : 'wall clock (UTC)'}`,
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
    // Both names where Slurm's differs (CSM: `x3000c0s19b1n0 (nid000006)`).
    const shown = failed.map(([name, node]) => [bothNames(name, node.wlmName), node] as const);
    const width = Math.max(...shown.map(([name]) => name.length));
    for (const [name, node] of shown) lines.push(`    ${name.padEnd(width)}  ${node.reason ?? ''}`);
  }
  const lastMessages = report.messageLog.slice(-5);
  if (lastMessages.length > 0) {
    lines.push('', `  Last messages (${report.messageLog.length} in all):`);
    for (const message of lastMessages) lines.push(`    ${formatInstant(message.at, report)}  ${message.text}`);
  }
  return lines.join('\n');
}

export function formatDuration(seconds: number): string {
  // Rounded once, whole: 1799.9 s is 30 min 0 s, not 29 min 60 s.
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${s} s` : `${s} s`;
}
