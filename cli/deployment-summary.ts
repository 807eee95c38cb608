import { shortList } from '../core/text';
import type { DeploymentReport } from '../control-plane/reports/deployment-report';
import { formatDuration } from '../core/time-format';

/** Shipyard's end of run: a group summary, then a node summary. */
export function renderDeploymentSummary(
  report: DeploymentReport,
  extra: { realSeconds?: number; simulatedSeconds?: number; resumeCommand?: string } = {},
): string {
  const lines: string[] = [];
  lines.push(
    `Deployment ${report.deploymentId}: ${report.status}` +
      (report.criticalGroupsFailed ? ` (critical groups failed: ${report.failedCriticalGroups.join(', ')})` : ''),
  );
  if (report.status === 'STOPPED' && extra.resumeCommand) lines.push(`  stopped: carry it on with: ${extra.resumeCommand}`);
  if (extra.realSeconds !== undefined) {
    lines.push(
      `  took ${extra.realSeconds.toFixed(1)} s` + (extra.simulatedSeconds !== undefined ? ` (${formatDuration(extra.simulatedSeconds)} simulated)` : ''),
    );
  }
  lines.push('', '  Groups:');
  const width = Math.max(5, ...Object.keys(report.groups).map((n) => n.length));
  for (const [name, group] of Object.entries(report.groups)) {
    const why = group.blockedBy
      ? `blocked by ${group.blockedBy}`
      : [...group.failures.map((f) => `${f.criteria} needed ${f.needed}, got ${f.actual}`), ...(group.cause ? [group.cause] : [])].join('; ');
    lines.push(
      `    ${name.padEnd(width)}  ${group.stage.padEnd(11)} ${group.critical ? 'critical ' : '         '} ${String(group.nodes.length).padStart(5)} nodes  ${why}`,
    );
  }
  const byStage = new Map<string, string[]>();
  for (const [node, stage] of Object.entries(report.nodes)) byStage.set(stage, [...(byStage.get(stage) ?? []), node]);
  lines.push('', '  Nodes:');
  for (const stage of ['DEPLOYED', 'PREPARED', 'FAILED', 'NOT_STARTED']) {
    const nodes = byStage.get(stage) ?? [];
    if (nodes.length === 0) continue;
    const listed = stage === 'DEPLOYED' ? '' : `: ${shortList(nodes, 12)}`;
    lines.push(`    ${stage.padEnd(11)} ${String(nodes.length).padStart(5)}${listed}`);
  }
  return lines.join('\n');
}
