import type { GraphGroup, TaskGraph } from './parse-task-graph';
import type { TaskPlan } from './task-plan';

/** `rollout plan tasks --json`: batches in the order they may start, each node's tasks in execution order, the merged parameters. */
export interface TaskPlanPreview {
  batches: { group: string; nodes: string[]; step: number }[];
  nodes: Record<string, string[]>;
  parameters: Record<string, Record<string, Record<string, unknown>>>;
  dropped: TaskPlan['dropped'];
  warnings: string[];
}

export function previewTaskPlan(plan: TaskPlan): TaskPlanPreview {
  const nodes: Record<string, string[]> = {};
  const parameters: TaskPlanPreview['parameters'] = {};
  for (const [node, tasks] of Object.entries(plan.nodes)) {
    nodes[node] = tasks.map((task) => task.id);
    parameters[node] = Object.fromEntries(tasks.map((task) => [task.id, task.parameters]));
  }
  return { batches: plan.batches, nodes, parameters, dropped: plan.dropped, warnings: plan.warnings.map((w) => `${w.field}: ${w.message}`) };
}

const MAX_LABEL_NODES = 6;

/** Mermaid's entity codes, so quotes and markup in a name cannot break a label. */
function mermaidText(text: string): string {
  return text.replace(/[#"<>&]/g, (char) => `#${char.charCodeAt(0)};`);
}

/**
 * The plan as a Mermaid flowchart: one box per batch (group, nodes), an arrow from each batch to
 * the next chunk of its group, and from a group's last batch to the first batch of each group that
 * waits for it. Ids are positional (`b3`), so any group or node name is safe.
 */
export function taskPlanMermaid(plan: TaskPlan, graph: TaskGraph): string {
  const lines = ['flowchart TD'];
  const byGroup = new Map<string, number[]>();
  plan.batches.forEach((batch, i) => {
    byGroup.set(batch.group, [...(byGroup.get(batch.group) ?? []), i]);
    const shown =
      batch.nodes.length > MAX_LABEL_NODES
        ? `${batch.nodes.slice(0, MAX_LABEL_NODES - 1).join(', ')}, ... (${batch.nodes.length} nodes)`
        : batch.nodes.join(', ');
    lines.push(`  b${i}["${mermaidText(batch.group)}<br/>${mermaidText(shown)}"]`);
  });
  const groups = new Map(graph.groups.map((group) => [group.id, group]));
  // A group with no batch passes its order on: its dependants wait for what it waits for.
  const lastBatches = (group: GraphGroup): number[] => {
    const own = byGroup.get(group.id);
    return own ? [own.at(-1)!] : group.after.flatMap((id) => lastBatches(groups.get(id)!));
  };
  const edges = new Set<string>();
  for (const group of graph.groups) {
    const own = byGroup.get(group.id);
    if (!own) continue;
    own.slice(1).forEach((batch, k) => edges.add(`  b${own[k]} --> b${batch}`));
    for (const before of group.after.flatMap((id) => lastBatches(groups.get(id)!))) edges.add(`  b${before} --> b${own[0]}`);
  }
  return `${[...lines, ...edges].join('\n')}\n`;
}
