/**
 * The plan as a Mermaid flowchart: one box per group (name, critical marker, node count), an
 * arrow from each dependency to its dependant. Ids are positional (`g0_ntp_node`) so any group
 * name is safe: dashes, dots, spaces, Mermaid keywords such as `end`, or two names that sanitise alike.
 */
import { plannedGroup, type DeploymentPlan } from './deployment-plan';

function mermaidId(name: string, position: number): string {
  return `g${position}_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
}

/** Mermaid's entity codes, so quotes and markup in a group name cannot break the label. */
function mermaidText(text: string): string {
  return text.replace(/[#"<>&]/g, (char) => `#${char.charCodeAt(0)};`);
}

export function deploymentPlanMermaid(plan: DeploymentPlan): string {
  const ids = new Map(plan.order.map((name, position) => [name, mermaidId(name, position)]));
  const idOf = (name: string) => ids.get(name) ?? mermaidId(name, -1);
  const lines = ['flowchart TD'];
  for (const name of plan.order) {
    const group = plannedGroup(plan, name);
    const count = `${group.nodes.length} ${group.nodes.length === 1 ? 'node' : 'nodes'}`;
    const marker = group.critical ? ' (critical)' : '';
    lines.push(`  ${idOf(name)}["${mermaidText(name)}${marker}<br/>${count}"]`);
  }
  for (const name of plan.order) {
    for (const dependency of plannedGroup(plan, name).dependsOn) lines.push(`  ${idOf(dependency)} --> ${idOf(name)}`);
  }
  const critical = plan.order.filter((name) => plannedGroup(plan, name).critical);
  if (critical.length > 0) {
    lines.push('  classDef critical stroke-width:3px');
    lines.push(`  class ${critical.map(idOf).join(',')} critical`);
  }
  return `${lines.join('\n')}\n`;
}
