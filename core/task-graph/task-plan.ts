import { InvalidInputError, type FieldProblem } from '../errors';
import type { InventoryNode } from '../site/site-nodes';
import { proposeSchedule, type OperationSpec } from '../scheduling';
import { layeredParameters } from './attributes';
import { evaluateCondition, type ConditionContext } from './conditions';
import { taskParametersSchema, UNGROUPED_STAGES, type TaskType } from './graph-document';
import { toFieldProblems } from '../validation';
import type { GraphGroup, GraphTask, TaskGraph } from './parse-task-graph';
import { tasksLeftOut, type DropReason, type TaskSelection } from './selection';

/** A node as the plan sees it: its name and roles, in the site's order. */
export interface TaskGraphNode {
  name: string;
  roles: readonly string[];
}

export interface PlannedTask {
  id: string;
  type: TaskType;
  stage: string;
  /** The task's parameters with the attribute layers merged in for this node. */
  parameters: Record<string, unknown>;
}

/** Nodes of one role group that start together (Fuel's chunks: `parallel` with `amount`, `one_by_one`). */
export interface TaskBatch {
  group: string;
  nodes: string[];
  /** Batches of the same step may start together; step k+1 starts only after the batches it waits for. */
  step: number;
}

export interface TaskPlan {
  /** In the order they may start. Nodes whose roles match no group are in a batch of group `*`, step 0. */
  batches: TaskBatch[];
  /** Each node of the deployment (site order) and its tasks in execution order. */
  nodes: Record<string, PlannedTask[]>;
  /** Tasks that run on no node, and why. */
  dropped: { task: string; reason: DropReason | `condition false: ${string}` | 'no node runs it' }[];
  /** Operations for the annealer: one per node-task, plus barriers (ids starting with `@`, see isBarrier). */
  operations: OperationSpec[];
  /** The annealer's per-group caps (one_by_one 1, parallel amount N). */
  groupLimits: Record<string, number>;
  warnings: FieldProblem[];
}

/** The inventory's nodes as the planner sees them (a node without roles takes part in no graph). */
export function taskGraphNodes(inventory: readonly Pick<InventoryNode, 'name' | 'roles'>[]): TaskGraphNode[] {
  return inventory.map((node) => ({ name: node.name, roles: node.roles ?? [] }));
}

/** The group of nodes whose roles match no role group. */
export const UNGROUPED = '*';

/** Barrier operations join many ops into one (a stage ended, a chunk ended): they do no work on a node. */
export function isBarrier(operationId: string): boolean {
  return operationId.startsWith('@');
}

/** `node/task`: the id of one task's operation on one node. */
export function operationId(node: string, task: string): string {
  return `${node}/${task}`;
}

/**
 * Proposes the deployment of `graph` on `siteNodes`: which nodes run which tasks in which order, the
 * batches the role groups' strategies give, and the operations (with their requirements) for the
 * annealer. Throws if the selection names unknown tasks or nodes, or if the graph, once laid over
 * the nodes, waits on itself (a task requiring a task of a group that starts later).
 */
export function planTaskGraph(graph: TaskGraph, siteNodes: readonly TaskGraphNode[], selection: TaskSelection = {}): TaskPlan {
  const leftOut = tasksLeftOut(graph, selection);
  const siteNames = new Set(siteNodes.map((node) => node.name));
  const unknownNodes = (selection.nodes ?? []).filter((name) => !siteNames.has(name));
  if (unknownNodes.length > 0)
    throw new InvalidInputError(
      'task selection',
      unknownNodes.map((name) => ({ field: 'nodes', message: `unknown node '${name}'` })),
    );
  const wanted = selection.nodes === undefined ? undefined : new Set(selection.nodes);
  const candidates = siteNodes.filter((node) => (wanted ? wanted.has(node.name) : true) && node.roles.length > 0);

  const context: ConditionContext = {
    clusterStatus: graph.clusterStatus,
    nodesCount: candidates.length,
    deploymentRoles: new Set(candidates.flatMap((node) => node.roles)),
    clusterRoles: new Set(siteNodes.flatMap((node) => node.roles)),
  };
  const dropped: TaskPlan['dropped'] = [];
  const kept = graph.tasks.filter((task) => {
    const reason = leftOut.get(task.id);
    if (reason) dropped.push({ task: task.id, reason });
    else if (task.condition && !evaluateCondition(task.condition.tree, context))
      dropped.push({ task: task.id, reason: `condition false: ${task.condition.text}` });
    else return true;
    return false;
  });

  // Which groups each node matches; its batch is that of the first in group order.
  const groupsOf = new Map(candidates.map((node) => [node.name, graph.groups.filter((group) => group.roles.some((role) => node.roles.includes(role)))]));
  const runsOn = (task: GraphTask, node: TaskGraphNode) =>
    task.roles.includes('*') ||
    task.roles.some((role) => node.roles.includes(role)) ||
    (task.groups.includes('*') ? groupsOf.get(node.name)!.length > 0 : groupsOf.get(node.name)!.some((group) => task.groups.includes(group.id)));

  const nodeTasks = new Map<string, GraphTask[]>();
  for (const node of candidates) {
    const tasks = kept.filter((task) => runsOn(task, node));
    if (tasks.length > 0) nodeTasks.set(node.name, tasks);
  }
  const deployed = candidates.filter((node) => nodeTasks.has(node.name));
  const present = new Set([...nodeTasks.values()].flatMap((tasks) => tasks.map((task) => task.id)));
  for (const task of kept) if (!present.has(task.id)) dropped.push({ task: task.id, reason: 'no node runs it' });

  const batchOf = new Map<string, string>();
  for (const node of deployed) batchOf.set(node.name, groupsOf.get(node.name)![0]?.id ?? UNGROUPED);
  const { batches, chunks } = batchesOf(graph.groups, deployed, batchOf);
  const operations = operationsOf(graph, deployed, nodeTasks, present, batchOf, chunks);
  refuseCycles(graph, operations);

  const nodes: Record<string, PlannedTask[]> = {};
  const parameterProblems = new Map<string, FieldProblem>();
  for (const node of deployed) {
    nodes[node.name] = nodeTasks.get(node.name)!.map((task) => {
      const parameters = layeredParameters(task, node, graph.attributes);
      // The layers may change what the task's own parameters said: the merged ones must still suit its type.
      const checked = taskParametersSchema(task.type).safeParse(parameters);
      if (!checked.success) {
        for (const p of toFieldProblems(checked.error)) {
          const field = `${task.path}.parameters${p.field ? `.${p.field}` : ''}`;
          if (!parameterProblems.has(field))
            parameterProblems.set(field, { field, message: `${p.message} (its parameters merged with the attribute layers, on node ${node.name})` });
        }
      }
      return { id: task.id, type: task.type, stage: task.stage, parameters };
    });
  }
  if (parameterProblems.size > 0) throw new InvalidInputError('task graph', [...parameterProblems.values()]);
  return { batches, nodes, dropped, operations, groupLimits: groupLimitsOf(graph.groups), warnings: planWarnings(graph, siteNodes, deployed, selection) };
}

/** What the plan deploys nothing of, or names to no effect: groups and attribute layers of roles and nodes the site does not have, an empty plan. */
function planWarnings(graph: TaskGraph, siteNodes: readonly TaskGraphNode[], deployed: readonly TaskGraphNode[], selection: TaskSelection): FieldProblem[] {
  const roles = new Set(siteNodes.flatMap((node) => node.roles));
  const names = new Set(siteNodes.map((node) => node.name));
  const warnings: FieldProblem[] = graph.groups
    .filter((group) => !group.roles.some((role) => roles.has(role)))
    .map((group) => ({
      field: `${group.path}.role`,
      message: `no node of the site has role ${group.roles.map((r) => `'${r}'`).join(' or ')}: group ${group.id} deploys nothing`,
    }));
  for (const role of Object.keys(graph.attributes.roles)) {
    if (!roles.has(role))
      warnings.push({ field: `attributes.roles.${role}`, message: `no node of the site has role '${role}': these parameters reach no task` });
  }
  for (const node of Object.keys(graph.attributes.nodes)) {
    if (!names.has(node)) warnings.push({ field: `attributes.nodes.${node}`, message: `'${node}' is not a node of the site: these parameters reach no task` });
  }
  if (deployed.length === 0) {
    const roleless = (selection.nodes ?? []).filter((name) => siteNodes.find((node) => node.name === name)?.roles.length === 0);
    const why =
      roleless.length > 0
        ? `the nodes selected have no role (${roleless.join(', ')})`
        : 'no selected node has a role a task runs on, or the selection left no task';
    warnings.push({ field: 'selection', message: `the plan runs no task: ${why}` });
  }
  return warnings;
}

/**
 * A graph valid on its own may still wait on itself once laid over the nodes (a task requiring one of
 * a group that starts after it): refused, naming the tasks of the cycle and where the first one is.
 */
function refuseCycles(graph: TaskGraph, operations: readonly OperationSpec[]): void {
  try {
    proposeSchedule(operations);
  } catch (err) {
    if (!(err instanceof InvalidInputError)) throw err;
    const byId = new Map(graph.tasks.map((task) => [task.id, task]));
    throw new InvalidInputError(
      'task graph',
      err.problems.map((p) => {
        // The cycle's operations are `node/task`, `@task:<task>` and other barriers: its tasks, in graph order.
        const ops = p.message.replace(/^dependency cycle: /, '').split(' -> ');
        const inCycle = new Set(
          ops.map((op) => (op.startsWith('@task:') ? op.slice('@task:'.length) : op.startsWith('@') ? '' : op.slice(op.indexOf('/') + 1))),
        );
        const tasks = graph.tasks.filter((task) => inCycle.has(task.id));
        const first = tasks[0] && byId.get(tasks[0].id);
        return {
          field: first?.path ?? 'tasks',
          message: `laid over the nodes, the graph waits on itself (a task requires one of a group that starts after it)${tasks.length > 0 ? `: tasks ${tasks.map((t) => t.id).join(', ')}` : ''}; ${p.message}`,
        };
      }),
      { cause: err },
    );
  }
}

function groupLimitsOf(groups: readonly GraphGroup[]): Record<string, number> {
  const limits: Record<string, number> = {};
  for (const group of groups) {
    if (group.strategy.type === 'one_by_one') limits[group.id] = 1;
    else if (group.strategy.amount !== undefined) limits[group.id] = group.strategy.amount;
  }
  return limits;
}

function batchesOf(groups: readonly GraphGroup[], deployed: readonly TaskGraphNode[], batchOf: ReadonlyMap<string, string>) {
  const batches: TaskBatch[] = [];
  const chunks = new Map<string, string[][]>();
  const lastStep = new Map<string, number>();
  const ungrouped = deployed.filter((node) => batchOf.get(node.name) === UNGROUPED).map((node) => node.name);
  if (ungrouped.length > 0) batches.push({ group: UNGROUPED, nodes: ungrouped, step: 0 });
  for (const group of groups) {
    const members = deployed.filter((node) => batchOf.get(node.name) === group.id).map((node) => node.name);
    const size = group.strategy.type === 'one_by_one' ? 1 : (group.strategy.amount ?? Math.max(1, members.length));
    const groupChunks: string[][] = [];
    for (let i = 0; i < members.length; i += size) groupChunks.push(members.slice(i, i + size));
    chunks.set(group.id, groupChunks);
    const first = Math.max(-1, ...group.after.map((id) => lastStep.get(id)!)) + 1;
    groupChunks.forEach((nodes, k) => batches.push({ group: group.id, nodes, step: first + k }));
    lastStep.set(group.id, first + groupChunks.length - 1);
  }
  // Groups come in group order; batches start by step, group order breaking ties.
  return {
    batches: batches
      .map((batch, i) => ({ batch, i }))
      .sort((a, b) => a.batch.step - b.batch.step || a.i - b.i)
      .map(({ batch }) => batch),
    chunks,
  };
}

/** What the operations are laid out from: the deployed nodes, each one's tasks, its batch's group and its chunk. */
interface OperationLayout {
  graph: TaskGraph;
  deployed: readonly TaskGraphNode[];
  nodeTasks: ReadonlyMap<string, GraphTask[]>;
  batchOf: ReadonlyMap<string, string>;
  chunks: ReadonlyMap<string, string[][]>;
}

/**
 * One operation per node-task, chained on each node in the graph's task order (a failed task
 * blocks the node's later tasks). Across nodes, barriers keep the operation count linear:
 * `@stage:S` ends when every op of stage S ended (and the stage before), `@S:group:g` when group g's
 * nodes ended S, `@S:group:g:k` when chunk k did, `@task:t` when t ended on every node running it.
 * Node ops first (plan order = the order ops are offered to the annealer), barriers after.
 */
function operationsOf(
  graph: TaskGraph,
  deployed: readonly TaskGraphNode[],
  nodeTasks: ReadonlyMap<string, GraphTask[]>,
  present: ReadonlySet<string>,
  batchOf: ReadonlyMap<string, string>,
  chunks: ReadonlyMap<string, string[][]>,
): OperationSpec[] {
  const layout: OperationLayout = { graph, deployed, nodeTasks, batchOf, chunks };
  const requiresOf = effectiveRequirements(graph, present);
  return [...nodeOperations(layout, requiresOf), ...taskBarriers(layout, requiresOf), ...stageBarriers(layout)];
}

function barrier(id: string, requires: readonly string[]): OperationSpec {
  return { id, node: id, requires: [...new Set(requires)] };
}

/** What a task really waits for once tasks that run nowhere are gone: their own requirements. */
function effectiveRequirements(graph: TaskGraph, present: ReadonlySet<string>): (task: string) => string[] {
  const byId = new Map(graph.tasks.map((task) => [task.id, task]));
  const effective = new Map<string, string[]>();
  const requiresOf = (id: string): string[] => {
    const known = effective.get(id);
    if (known) return known;
    const found = new Set<string>();
    for (const parent of byId.get(id)!.requires) {
      if (present.has(parent)) found.add(parent);
      else for (const p of requiresOf(parent)) found.add(p);
    }
    effective.set(id, [...found]);
    return effective.get(id)!;
  };
  return requiresOf;
}

/** Each node's ops, chained in task order; a node's first op of a stage waits at the stage's entry, a task of another node at its `@task:` barrier. */
function nodeOperations({ graph, deployed, nodeTasks, batchOf, chunks }: OperationLayout, requiresOf: (task: string) => string[]): OperationSpec[] {
  const stageIndexOf = new Map(graph.stages.map((stage, k) => [stage, k]));
  const entryOf = stageEntries(graph, batchOf, chunks);
  const specs: OperationSpec[] = [];
  for (const node of deployed) {
    let previous: string | undefined;
    let previousStage: string | undefined;
    const own = new Set(nodeTasks.get(node.name)!.map((t) => t.id));
    for (const task of nodeTasks.get(node.name)!) {
      const id = operationId(node.name, task.id);
      const requires: string[] = previous ? [previous] : [];
      if (task.stage !== previousStage) requires.push(...entryOf(node.name, task.stage, stageIndexOf.get(task.stage)!));
      for (const parent of requiresOf(task.id)) if (!own.has(parent)) requires.push(`@task:${parent}`);
      // Role groups' caps order the grouped stages only: pre_deployment and post_deployment run on every node at once.
      const group = UNGROUPED_STAGES.includes(task.stage) ? undefined : batchOf.get(node.name)!;
      specs.push({ id, node: node.name, ...(group === undefined ? {} : { group }), requires: [...new Set(requires)] });
      previous = id;
      previousStage = task.stage;
    }
  }
  return specs;
}

/** Where each node's first op of a stage waits: the previous stage's barrier, and in grouped stages its chunk's entry. */
function stageEntries(
  graph: TaskGraph,
  batchOf: ReadonlyMap<string, string>,
  chunks: ReadonlyMap<string, string[][]>,
): (node: string, stage: string, stageIndex: number) => string[] {
  const groupById = new Map(graph.groups.map((group) => [group.id, group]));
  const chunkIndex = new Map([...chunks.values()].flatMap((groupChunks) => groupChunks.flatMap((chunk, k) => chunk.map((node) => [node, k] as const))));
  return (node, stage, stageIndex) => {
    const entry = stageIndex > 0 ? [`@stage:${graph.stages[stageIndex - 1]}`] : [];
    const group = batchOf.get(node)!;
    if (UNGROUPED_STAGES.includes(stage) || group === UNGROUPED) return entry;
    const k = chunkIndex.get(node)!;
    if (k > 0) return [...entry, `@${stage}:group:${group}:${k - 1}`];
    return [...entry, ...groupById.get(group)!.after.map((id) => `@${stage}:group:${id}`)];
  };
}

/** `@task:t` for each task another node's task waits for: it ends when t ended on every node running it. */
function taskBarriers({ deployed, nodeTasks }: OperationLayout, requiresOf: (task: string) => string[]): OperationSpec[] {
  const nodesRunning = new Map<string, string[]>();
  for (const node of deployed) for (const task of nodeTasks.get(node.name)!) nodesRunning.set(task.id, [...(nodesRunning.get(task.id) ?? []), node.name]);
  const crossNode = new Set(deployed.flatMap((node) => nodeTasks.get(node.name)!.flatMap((task) => requiresOf(task.id))));
  return [...crossNode].map((task) =>
    barrier(
      `@task:${task}`,
      nodesRunning.get(task)!.map((node) => operationId(node, task)),
    ),
  );
}

/** Per stage: in grouped stages each group's chunk barriers and the group's own, then `@stage:S` over them and the ungrouped nodes' last ops. */
function stageBarriers({ graph, deployed, nodeTasks, batchOf, chunks }: OperationLayout): OperationSpec[] {
  const lastOpIn = (node: string, stage: string) => {
    const task = nodeTasks
      .get(node)!
      .filter((t) => t.stage === stage)
      .at(-1);
    return task && operationId(node, task.id);
  };
  const specs: OperationSpec[] = [];
  graph.stages.forEach((stage, k) => {
    const stageNeeds: string[] = k > 0 ? [`@stage:${graph.stages[k - 1]}`] : [];
    if (!UNGROUPED_STAGES.includes(stage)) {
      for (const group of graph.groups) {
        const groupChunks = chunks.get(group.id)!;
        groupChunks.forEach((chunk, c) => {
          const ends = chunk.map((node) => lastOpIn(node, stage)).filter((op): op is string => op !== undefined);
          // An empty chunk passes the order on: it ends when the chunk before it (or the groups before) did.
          specs.push(
            barrier(`@${stage}:group:${group.id}:${c}`, [
              ...ends,
              ...(c > 0 ? [`@${stage}:group:${group.id}:${c - 1}`] : group.after.map((id) => `@${stage}:group:${id}`)),
            ]),
          );
        });
        const last = groupChunks.length > 0 ? [`@${stage}:group:${group.id}:${groupChunks.length - 1}`] : group.after.map((id) => `@${stage}:group:${id}`);
        specs.push(barrier(`@${stage}:group:${group.id}`, last));
        stageNeeds.push(`@${stage}:group:${group.id}`);
      }
    }
    for (const node of deployed) {
      if (!UNGROUPED_STAGES.includes(stage) && batchOf.get(node.name) !== UNGROUPED) continue;
      const end = lastOpIn(node.name, stage);
      if (end) stageNeeds.push(end);
    }
    specs.push(barrier(`@stage:${stage}`, stageNeeds));
  });
  return specs;
}
