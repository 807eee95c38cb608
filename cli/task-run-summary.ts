import { compressHostlist } from '../core/site/hostlist';
import type { OperationState } from '../core/scheduling';
import type { TaskRunView } from '../control-plane/reports/task-run-report';
import { formatDuration } from '../core/time-format';

/** Rows of node tasks listed one by one before the rest are counted: a fleet-sized run stays readable. */
const MAX_LISTED = 20;
const STATES: readonly OperationState[] = ['ACTIVE', 'ERROR', 'BLOCKED', 'TRANSITION', 'TODO', 'PROPOSED'];

/**
 * The end of a task run: each node's task states (nodes whose tasks ended alike on one line, as a
 * hostlist), why each blocked task is blocked, what failed, what was left alone, and what never ran.
 */
export function renderTaskRunSummary(
  view: TaskRunView,
  extra: { title?: string; realSeconds?: number; simulatedSeconds?: number; resumeCommand?: string } = {},
): string {
  const taskRuns = STATES.reduce((sum, state) => sum + view.counts[state], 0);
  const counts = STATES.filter((state) => view.counts[state] > 0).map((state) => `${view.counts[state]} ${state.toLowerCase()}`);
  const lines = [
    `${extra.title ?? `Task run ${view.runId}`}: ${view.status} (${taskRuns} task runs on ${view.nodeCount} nodes: ${counts.join(', ') || 'none'})`,
  ];
  if (view.status === 'STOPPED' && extra.resumeCommand) lines.push(`  stopped: carry it on with: ${extra.resumeCommand}`);
  if (extra.realSeconds !== undefined) {
    const simulated = extra.simulatedSeconds !== undefined ? ` (${formatDuration(extra.simulatedSeconds)} simulated)` : '';
    lines.push(`  took ${extra.realSeconds.toFixed(1)} s${simulated}`);
  }

  const alike = new Map<string, string[]>();
  for (const [node, tasks] of Object.entries(view.nodes)) {
    const row = Object.entries(tasks)
      .map(([task, state]) => `${task} ${state}`)
      .join(', ');
    alike.set(row, [...(alike.get(row) ?? []), node]);
  }
  if (alike.size > 0) {
    lines.push('', '  Task states, in execution order (nodes alike together):');
    const rows = [...alike].map(([row, nodes]) => [nodes.length === 1 ? nodes[0]! : `${compressHostlist(nodes)} (${nodes.length})`, row] as const);
    const width = Math.max(...rows.map(([nodes]) => nodes.length));
    for (const [nodes, row] of rows) lines.push(`    ${nodes.padEnd(width)}  ${row}`);
  }

  const errorOf = (op: string) => {
    const slash = op.indexOf('/');
    return view.errors[op.slice(0, slash)]?.[op.slice(slash + 1)];
  };
  section(lines, 'Failed', view.errors, (error) => error);
  section(lines, 'Blocked (behind the failed tasks named)', view.blocked, (behind) =>
    behind.map((op) => `${op}${errorOf(op) ? ` (${errorOf(op)})` : ''}`).join(', '),
  );
  section(lines, 'Left alone', view.leftAlone, (why) => why);
  if (view.dropped.length > 0) lines.push('', '  Not run:', ...view.dropped.map((d) => `    ${d.task} (${d.reason})`));
  if (view.warnings.length > 0) lines.push('', ...view.warnings.map((w) => `  warning: ${w}`));
  return lines.join('\n');
}

/** One line per node task of `entries`, the first MAX_LISTED of them, then how many more. */
function section<T>(lines: string[], title: string, entries: Record<string, Record<string, T>>, describe: (value: T) => string): void {
  const rows = Object.entries(entries).flatMap(([node, tasks]) => Object.entries(tasks).map(([task, value]) => `${node} ${task}: ${describe(value)}`));
  if (rows.length === 0) return;
  lines.push('', `  ${title}:`, ...rows.slice(0, MAX_LISTED).map((row) => `    ${row}`));
  if (rows.length > MAX_LISTED) lines.push(`    ... and ${rows.length - MAX_LISTED} more (--json has them all)`);
}
