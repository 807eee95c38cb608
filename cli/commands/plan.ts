import { Option, type Command } from 'commander';
import {
  deploymentPlanMermaid,
  parseNodeNameList,
  planDeployment,
  plannedGroup,
  previewDeploymentPlan,
  selectDeploymentStrategy,
  type DeploymentPlan,
  type DeploymentStrategy,
  type NodeConcurrency,
  type SuccessCriteria,
} from '../../core/group-deployment';
import { planTaskGraph, previewTaskPlan, taskGraphNodes, taskPlanMermaid, type TaskPlan } from '../../core/task-graph';
import type { InventoryNode } from '../../ports/site';
import { addTaskSelectionOptions, loadGraphFile, taskSelectionOf, type TaskSelectionOptions } from '../graph-file';
import { inventoryOf } from '../inventory-from-site';
import { loadSiteSource, type SiteSourceOptions } from '../site-source';
import { loadStrategyFile } from '../strategy-file';
import { registerPlanUpgradeCommand } from '../upgrade-plan-command';

const FORMATS = ['text', 'json', 'mermaid'] as const;
type PlanFormat = (typeof FORMATS)[number];

interface PlanDeployOptions extends SiteSourceOptions {
  strategy?: string;
  nodes?: string;
  json?: boolean;
  format?: PlanFormat;
}

/** Where the strategy came from, for the text plan's header. */
type StrategySource = { kind: 'file'; path: string } | { kind: 'nodes' } | { kind: 'default' };

/** Node lists longer than this are shortened in the text plan; --json always has them all. */
const MAX_LISTED_NODES = 10;

export function registerPlanCommands(program: Command): void {
  const plan = program.command('plan').description('Show what a command would do, without touching anything');

  plan
    .command('deploy')
    .description('Show the group deployment a strategy gives on a site: the order of groups, their nodes, the dependency graph')
    .option('--site <file>', 'simulated site file (YAML or JSON)')
    .addOption(new Option('--site-config <file>', "site connection profile: plan against its inventory service's nodes").conflicts('site'))
    .addOption(new Option('--strategy <file>', 'DeploymentStrategy (YAML or JSON, whole document or {groups: [...]})').conflicts('nodes'))
    .addOption(new Option('--nodes <names>', "comma-separated node names: one critical group 'default' over just these"))
    .addOption(new Option('--json', 'print the plan as one JSON object (same as --format json)').conflicts('format'))
    .addOption(new Option('--format <format>', 'how to print the plan (mermaid: a flowchart of the groups)').choices(FORMATS))
    .action(async (options: PlanDeployOptions) => {
      await planDeploy(options);
    });

  registerPlanUpgradeCommand(plan);

  addTaskSelectionOptions(
    plan
      .command('tasks')
      .description("Show a task graph's deployment on a site: batches by role group, each node's tasks in order, merged parameters")
      .option('--site <file>', 'simulated site file (YAML or JSON); nodes carry roles')
      .addOption(new Option('--site-config <file>', "site connection profile: plan against its inventory service's nodes").conflicts('site'))
      .requiredOption('--graph <file>', 'task graph (YAML, or JSON by its .json extension)'),
  )
    .addOption(new Option('--json', 'print the plan as one JSON object (same as --format json)').conflicts('format'))
    .addOption(new Option('--format <format>', 'how to print the plan (mermaid: a flowchart of the batches)').choices(FORMATS))
    .action(async (options: PlanTasksOptions) => {
      await planTasks(options);
    });
}

interface PlanTasksOptions extends SiteSourceOptions, TaskSelectionOptions {
  graph: string;
  json?: boolean;
  format?: PlanFormat;
}

async function planTasks(options: PlanTasksOptions): Promise<void> {
  const graph = await loadGraphFile(options.graph);
  const inventory = await inventoryOf(await loadSiteSource(options));
  const plan = planTaskGraph(graph, taskGraphNodes(inventory), taskSelectionOf(options));
  const format: PlanFormat = options.json ? 'json' : (options.format ?? 'text');
  if (format === 'text') {
    process.stdout.write(renderTaskPlanText(plan, options.graph));
    return;
  }
  // stdout must stay a valid JSON document or diagram, so warnings go to stderr.
  for (const warning of plan.warnings) process.stderr.write(`warning: ${warning.field}: ${warning.message}\n`);
  process.stdout.write(format === 'json' ? `${JSON.stringify(previewTaskPlan(plan), null, 2)}\n` : taskPlanMermaid(plan, graph));
}

function renderTaskPlanText(plan: TaskPlan, graphFile: string): string {
  const nodeCount = Object.keys(plan.nodes).length;
  const taskRuns = Object.values(plan.nodes).reduce((sum, tasks) => sum + tasks.length, 0);
  const lines = [
    `Task plan (graph ${graphFile}): ${count(nodeCount, 'node')}, ${count(taskRuns, 'task run')}, ${count(plan.batches.length, 'batch')}`,
    'Batches, in the order they may start (batches of one step start together):',
    ...plan.batches.map((batch) => `  step ${batch.step}  ${batch.group}: ${abbreviate(batch.nodes)}`),
    '',
    'Tasks per node, in order (parameters merged from the attribute layers):',
  ];
  // Nodes with the same tasks and parameters are listed together.
  const alike = new Map<string, string[]>();
  for (const [node, tasks] of Object.entries(plan.nodes)) {
    const key = tasks.map((task) => `${task.id} ${JSON.stringify(task.parameters)}`).join('\n');
    alike.set(key, [...(alike.get(key) ?? []), node]);
  }
  for (const [key, nodes] of alike) {
    lines.push(`  ${abbreviate(nodes)}:`);
    for (const [k, line] of key.split('\n').entries()) lines.push(`    ${k + 1}. ${line}`);
  }
  if (plan.dropped.length > 0) lines.push('', 'Not run:', ...plan.dropped.map((d) => `  ${d.task} (${d.reason})`));
  if (plan.warnings.length > 0) lines.push('', ...plan.warnings.map((w) => `warning: ${w.field}: ${w.message}`));
  return `${lines.join('\n')}\n`;
}

async function planDeploy(options: PlanDeployOptions): Promise<void> {
  const inventory = await inventoryOf(await loadSiteSource(options));
  const { strategy, source } = await strategyFor(options, inventory);
  // A criterion that can never be met is shown, not refused: the plan is what an operator fixes it with (deploy refuses it).
  const plan = planDeployment(strategy, inventory, { unreachableCriteria: 'report' });
  const format: PlanFormat = options.json ? 'json' : (options.format ?? 'text');

  if (format === 'text') {
    process.stdout.write(renderPlanText(plan, inventory, source));
    return;
  }
  // stdout must stay a valid JSON document or diagram, so warnings go to stderr.
  for (const line of unreachableWarnings(plan)) process.stderr.write(`${line}\n`);
  process.stdout.write(format === 'json' ? `${JSON.stringify(previewDeploymentPlan(plan), null, 2)}\n` : deploymentPlanMermaid(plan));
}

async function strategyFor(options: PlanDeployOptions, inventory: readonly InventoryNode[]): Promise<{ strategy: DeploymentStrategy; source: StrategySource }> {
  // The file is read (and validated) once, here, so that its problems name it; without one, which strategy applies is the core's rule.
  const file = options.strategy !== undefined ? await loadStrategyFile(options.strategy) : undefined;
  const nodes = options.nodes !== undefined ? parseNodeNameList(options.nodes) : undefined;
  const strategy = file?.strategy ?? selectDeploymentStrategy({ nodes }, inventory);
  const source: StrategySource = options.strategy !== undefined ? { kind: 'file', path: options.strategy } : nodes ? { kind: 'nodes' } : { kind: 'default' };
  return { strategy, source };
}

/** Problems are reported against the file, so the operator knows which one to fix. */
function renderPlanText(plan: DeploymentPlan, inventory: readonly InventoryNode[], source: StrategySource): string {
  const siteNodes = new Set(inventory.map((node) => node.name)).size;
  const lines = [
    `Deployment plan (${describeSource(source)}): ${count(plan.order.length, 'group')}, ` +
      `${plan.nodes.length} of the site's ${count(siteNodes, 'node')} selected`,
    `Order: ${plan.order.join(' > ')}`,
    'Groups run one at a time, each prepared then deployed, after every group it depends on succeeded.',
    '',
  ];
  const handledBy = new Map<string, string>();
  plan.order.forEach((name, i) => {
    const group = plannedGroup(plan, name);
    lines.push(`${i + 1}. ${name}${group.critical ? '  [critical]' : ''}`);
    lines.push(`   depends on:   ${group.dependsOn.length > 0 ? group.dependsOn.join(', ') : '-'}`);
    lines.push(`   nodes:        ${group.nodes.length} (${group.actionableNodes.length} actionable)`);
    lines.push(`   criteria:     ${describeCriteria(group.successCriteria)}`);
    lines.push(`   concurrency:  ${describeConcurrency(group.concurrency)}`);
    if (group.nodes.length === 0) lines.push('   selects no node: 100% successful, but 0 successful nodes for minimum_successful_nodes');
    if (group.actionableNodes.length > 0) lines.push(`   actionable:   ${abbreviate(group.actionableNodes)}`);
    // Overlapping groups: these count toward this group's criteria but were submitted by an earlier group.
    const earlier = group.nodes.filter((node) => handledBy.has(node));
    if (earlier.length > 0) lines.push(`   handled by an earlier group: ${abbreviate(earlier.map((node) => `${node} (${handledBy.get(node)})`))}`);
    for (const node of group.actionableNodes) handledBy.set(node, name);
  });

  const unselected = inventory.map((node) => node.name).filter((node) => !handledBy.has(node));
  if (unselected.length > 0) lines.push('', `Not in any group (not deployed): ${abbreviate([...new Set(unselected)])}`);
  const warnings = unreachableWarnings(plan);
  if (warnings.length > 0) lines.push('', ...warnings);
  return `${lines.join('\n')}\n`;
}

/** The criteria the plan shows can never be met, as `rollout deploy` (and the API, and the workflow) would refuse them. */
function unreachableWarnings(plan: DeploymentPlan): string[] {
  return (plan.unreachableCriteria ?? []).map((problem) => `warning: ${problem.field}: ${problem.message} (deploy refuses this strategy)`);
}

function describeSource(source: StrategySource): string {
  switch (source.kind) {
    case 'file':
      return `strategy ${source.path}`;
    case 'nodes':
      return 'the nodes given with --nodes';
    case 'default':
      return 'default strategy: every node, 100% must succeed';
  }
}

/** Named as in the strategy document, since that is what an operator will look for. */
function describeCriteria(criteria: SuccessCriteria | undefined): string {
  const parts = [
    criteria?.percentSuccessfulNodes === undefined ? undefined : `percent_successful_nodes ${criteria.percentSuccessfulNodes}`,
    criteria?.minimumSuccessfulNodes === undefined ? undefined : `minimum_successful_nodes ${criteria.minimumSuccessfulNodes}`,
    criteria?.maximumFailedNodes === undefined ? undefined : `maximum_failed_nodes ${criteria.maximumFailedNodes}`,
  ].filter((part): part is string => part !== undefined);
  return parts.length > 0 ? parts.join(', ') : 'none (no checks: the group always succeeds)';
}

function describeConcurrency(concurrency: NodeConcurrency): string {
  if (concurrency.type === 'one_by_one') return 'one node at a time';
  return concurrency.amount === undefined ? 'all nodes at once' : `${concurrency.amount} nodes at a time`;
}

function abbreviate(names: readonly string[]): string {
  if (names.length <= MAX_LISTED_NODES) return names.join(', ');
  const shown = MAX_LISTED_NODES - 2; // and the last one, so the range shows
  return `${names.slice(0, shown).join(', ')}, ..., ${names.at(-1)} (${names.length} in all)`;
}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : what.endsWith('h') ? 'es' : 's'}`;
}
