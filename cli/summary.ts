import { bothNames } from '../core/site/node-names';
import type { SessionReport } from '../engine/reports/session-report';

/** The human summary of a finished (or inspected) session. */
export function renderSessionSummary(report: SessionReport, extra: { realSeconds?: number; simulatedSeconds?: number } = {}): string {
  const lines: string[] = [];
  const outcome = report.completed ? 'completed' : report.state === 'DELETED' ? 'cancelled' : report.state === 'HALTED' ? 'halted' : 'not completed';
  lines.push(`Upgrade session ${report.upgradeId}: ${outcome} (state ${report.state})`);
  lines.push(
    `  ${report.startingLabel} -> template ${report.upgradeTemplateId}, ${report.stepCount} step(s) of ${report.upgradeStepSize}, ` +
      `failed nodes in '${report.failedLabel}'`,
  );
  const mode =
    report.controls.mode === 'window'
      ? `mode window: at most ${report.controls.maxUnavailable ?? report.upgradeStepSize} out of service, ${report.controls.drainAhead ?? 0} drained ahead, order ${report.controls.order}`
      : 'mode lockstep';
  lines.push(`  ${mode}${report.makespanSeconds !== undefined ? `, makespan ${formatDuration(report.makespanSeconds)}` : ''}`);
  if (report.haltedReason) lines.push(`  halted: ${report.haltedReason}`);
  if (report.paused) lines.push(`  paused by its operator: no new node starts until \`rollout session resume ${report.upgradeId}\``);
  if (report.awaitingApprovalOfBatch !== undefined) lines.push(`  waiting for the approval of batch ${report.awaitingApprovalOfBatch}: \`rollout session approve ${report.upgradeId}\``);
  else if (report.waiting && report.waiting !== 'paused') lines.push(`  waiting: ${report.waiting}`);
  const total = Object.keys(report.nodes).length;
  lines.push(
    `  nodes: ${total} | upgraded ${report.counts.UPGRADED} | failed ${report.counts.FAILED} | not started ${report.counts.NOT_STARTED}` +
      (report.counts.IN_PROGRESS > 0 ? ` | in progress ${report.counts.IN_PROGRESS}` : ''),
  );
  if (extra.realSeconds !== undefined) {
    const simulated = extra.simulatedSeconds !== undefined ? ` (${formatDuration(extra.simulatedSeconds)} simulated)` : '';
    lines.push(`  took ${extra.realSeconds.toFixed(1)} s${simulated}`);
  }
  const failed = Object.entries(report.nodes).filter(([, n]) => n.status === 'FAILED');
  if (failed.length > 0) {
    lines.push('', '  Failed nodes:');
    // Both names where Slurm's differs (CSM: `x3000c0s19b1n0 (nid000006)`).
    const shown = failed.map(([name, node]) => [bothNames(name, node.wlmName), node] as const);
    const width = Math.max(...shown.map(([name]) => name.length));
    for (const [name, node] of shown) lines.push(`    ${name.padEnd(width)}  ${node.reason ?? ''}`);
  }
  const lastMessages = report.messages.slice(-5);
  if (lastMessages.length > 0) {
    lines.push('', `  Last messages (${report.messages.length} in all):`);
    for (const message of lastMessages) lines.push(`    ${message}`);
  }
  return lines.join('\n');
}

export function formatDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.round(seconds % 60);
  return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${s} s` : `${s} s`;
}
