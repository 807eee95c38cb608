import type { z } from 'zod';
import { parseDocumentText } from '../document-text';
import { InvalidInputError, type FieldProblem } from '../errors';
import { stableTopologicalOrder, stronglyConnectedComponents } from '../group-deployment/graph-algorithms';
import { toFieldProblems } from '../validation';
import { compileCondition, type ConditionNode } from './conditions';
import {
  DEFAULT_STAGES,
  DEFAULT_TASK_STAGE,
  isTaskItem,
  graphItemSchema,
  taskGraphShellSchema,
  type Attributes,
  type GraphItem,
  type GroupItem,
  type GroupStrategy,
  type StageItem,
  type TaskItem,
  type TaskType,
} from './graph-document';

export interface GraphGroup {
  id: string;
  roles: string[];
  strategy: GroupStrategy;
  /** Groups whose nodes finish before this group's start (its requires plus the required_for naming it). */
  after: string[];
  /** Where the group is in the document, for problems: `tasks[3]`. */
  path: string;
}

export interface GraphTask {
  id: string;
  type: TaskType;
  /** Roles whose nodes run it; `['*']`: every node. */
  roles: string[];
  /** Groups whose nodes run it (its `groups` plus the groups listing it in `tasks`); `['*']`: every group. */
  groups: string[];
  stage: string;
  /** Tasks that end before it starts (its requires plus the required_for naming it). */
  requires: string[];
  parameters: Record<string, unknown>;
  condition?: { text: string; tree: ConditionNode };
  path: string;
}

/** A validated task graph: stages, groups and tasks each in the order they may run. */
export interface TaskGraph {
  clusterStatus: string;
  attributes: Attributes;
  stages: string[];
  groups: GraphGroup[];
  /** Stage by stage, then by requires, document order breaking ties: every node runs its tasks in this order. */
  tasks: GraphTask[];
}

/** Reads a graph file's text (YAML or JSON) and validates it; every problem is reported, each with its path. */
export function parseTaskGraph(text: string, format: 'json' | 'yaml' = 'yaml', subject = 'task graph'): TaskGraph {
  const parsed = parseDocumentText(text, format);
  if ('problems' in parsed) throw new InvalidInputError(subject, parsed.problems);
  return validateTaskGraph(parsed.value, subject);
}

/**
 * Validates a graph document already read: schema, references, cycles, stages, conditions. Every
 * problem is reported, each with its path, in this order: the items' own, duplicate ids, references
 * (item by item), cycles, stage contradictions, attribute layers.
 */
export function validateTaskGraph(input: unknown, subject = 'task graph'): TaskGraph {
  const { doc, at } = readGraphShell(input, subject);
  const read = readGraphItems(doc.tasks, at);
  const { index, problems: duplicates } = indexGraphItems(read, at);
  const references = checkReferences(index);
  const cycles = cycleProblems(index, references.order);
  const stages = cycles.stagesInCycle ? [] : orderStages(references.order);
  const problems = [
    ...read.problems,
    ...duplicates,
    ...references.problems,
    ...cycles.problems,
    // The stage checks need an order of the stages; without one (a stage cycle) that cycle is the problem to fix first.
    ...(cycles.stagesInCycle ? [] : stageProblems(index, references.order, stages)),
    ...attributeProblems(doc.attributes, (id) => index.isTask(id) || index.badIds.has(id)),
  ];
  if (problems.length > 0) throw new InvalidInputError(subject, problems);
  return assembleTaskGraph(doc, index, references.order, stages);
}

type GraphShell = z.output<typeof taskGraphShellSchema>;

/** Step "shell": the document's outer form (the items are read after, one by one). A bare list's items are named `[3]`, an object's `tasks[3]`. */
export function readGraphShell(input: unknown, subject: string): { doc: GraphShell; at: (i: number) => string } {
  const bare = Array.isArray(input);
  const result = taskGraphShellSchema.safeParse(bare ? { tasks: input } : input);
  if (!result.success) throw new InvalidInputError(subject, toFieldProblems(result.error));
  return { doc: result.data, at: (i) => (bare ? `[${i}]` : `tasks[${i}]`) };
}

/** The items that read well, where each is in the document, and the ids of those that did not. */
export interface GraphItemsRead {
  items: GraphItem[];
  /** Where each good item is in the document. */
  positions: number[];
  badIds: Set<string>;
  problems: FieldProblem[];
}

/**
 * Step "items": items are read one by one: a bad item is reported and left out of the checks that
 * follow, but its id (when it has one) still counts as known, so references to it are not reported too.
 */
export function readGraphItems(raws: readonly unknown[], at: (i: number) => string): GraphItemsRead {
  const read: GraphItemsRead = { items: [], positions: [], badIds: new Set(), problems: [] };
  raws.forEach((raw, i) => {
    const item = graphItemSchema.safeParse(raw);
    if (item.success) {
      read.items.push(item.data);
      read.positions.push(i);
      return;
    }
    read.problems.push(...toFieldProblems(item.error).map((p) => ({ ...p, field: p.field ? `${at(i)}.${p.field}` : at(i) })));
    const id = (raw as { id?: unknown } | null)?.id;
    if (typeof id === 'string') read.badIds.add(id);
  });
  return read;
}

/** The good items by id (the first of a duplicate id wins) and by kind: what every later check looks references up in. */
export interface GraphItemIndex {
  items: readonly GraphItem[];
  badIds: ReadonlySet<string>;
  /** The item's index in `items` of each id (its first item). */
  indexOf: ReadonlyMap<string, number>;
  /** Where the k-th good item is: `tasks[3]`. */
  atItem(k: number): string;
  isStage(id: string): boolean;
  isGroup(id: string): boolean;
  isTask(id: string): boolean;
}

/** Step "ids": indexes the good items by id, reporting each duplicate id with where the first one is. */
export function indexGraphItems(read: GraphItemsRead, at: (i: number) => string): { index: GraphItemIndex; problems: FieldProblem[] } {
  const { items, positions, badIds } = read;
  const atItem = (k: number) => at(positions[k]!);
  const problems: FieldProblem[] = [];
  const indexOf = new Map<string, number>();
  items.forEach((item, i) => {
    if (indexOf.has(item.id)) problems.push({ field: `${atItem(i)}.id`, message: `duplicate id '${item.id}' (first at ${atItem(indexOf.get(item.id)!)})` });
    else indexOf.set(item.id, i);
  });
  const kindOf = (id: string): GraphItem['type'] | 'stage' | undefined =>
    (DEFAULT_STAGES as readonly string[]).includes(id) ? 'stage' : indexOf.has(id) ? items[indexOf.get(id)!]!.type : undefined;
  const isTask = (id: string) => {
    const kind = kindOf(id);
    return kind !== undefined && kind !== 'group' && kind !== 'stage';
  };
  const index = { items, badIds, indexOf, atItem, isStage: (id: string) => kindOf(id) === 'stage', isGroup: (id: string) => kindOf(id) === 'group', isTask };
  return { index, problems };
}

/** The orders the references give: which stages, groups and tasks come after which. */
export interface GraphOrder {
  /** The defaults in order, then declared stages. */
  stageIds: string[];
  stageAfter: Map<string, Set<string>>;
  groupAfter: Map<string, Set<string>>;
  /** Tasks that end before each task starts (its requires plus the required_for naming it). */
  taskRequires: Map<string, Set<string>>;
  /** Each task listed in groups' `tasks`, with those groups. */
  groupTasks: Map<string, string[]>;
}

/** What one item's references give: its problems, and edges `[later, earlier]` of its own kind's order (a group's: its tasks too). */
interface ItemReferences {
  problems: FieldProblem[];
  after: [later: string, earlier: string][];
  /** A group's tasks: `[task, group]`. */
  members?: [task: string, group: string][];
}

/**
 * Step "references": every item's references checked, item by item in document order, and the
 * orders they give. Stages: the defaults in order, then declared ones; requires/required_for order them.
 */
export function checkReferences(index: GraphItemIndex): { problems: FieldProblem[]; order: GraphOrder } {
  const { items } = index;
  const stageIds = [
    ...DEFAULT_STAGES,
    ...items.filter((item) => item.type === 'stage' && !(DEFAULT_STAGES as readonly string[]).includes(item.id)).map((item) => item.id),
  ];
  const order: GraphOrder = {
    stageIds,
    stageAfter: new Map(stageIds.map((id) => [id, new Set<string>()])),
    groupAfter: new Map(),
    taskRequires: new Map(),
    groupTasks: new Map(),
  };
  DEFAULT_STAGES.forEach((id, k) => k > 0 && order.stageAfter.get(id)!.add(DEFAULT_STAGES[k - 1]!));
  items.forEach((item) => {
    if (item.type === 'group') order.groupAfter.set(item.id, new Set());
    else if (isTaskItem(item)) order.taskRequires.set(item.id, new Set());
  });
  const problems: FieldProblem[] = [];
  items.forEach((item, i) => {
    const found =
      item.type === 'stage' ? stageReferences(index, item, i) : item.type === 'group' ? groupReferences(index, item, i) : taskReferences(index, item, i);
    problems.push(...found.problems);
    const edges = item.type === 'stage' ? order.stageAfter : item.type === 'group' ? order.groupAfter : order.taskRequires;
    for (const [later, earlier] of found.after) edges.get(later)!.add(earlier);
    for (const [task, group] of found.members ?? []) order.groupTasks.set(task, [...(order.groupTasks.get(task) ?? []), group]);
  });
  return { problems, order };
}

/** A stage's requires and required_for name stages. */
function stageReferences(index: GraphItemIndex, item: StageItem, i: number): ItemReferences {
  const problems: FieldProblem[] = [];
  for (const key of ['requires', 'required_for'] as const) {
    item[key].forEach((id, k) => {
      if (!index.isStage(id)) {
        if (!index.badIds.has(id)) problems.push({ field: `${index.atItem(i)}.${key}[${k}]`, message: `unknown stage '${id}'` });
      } else if (id === item.id) problems.push({ field: `${index.atItem(i)}.${key}[${k}]`, message: `'${id}' names itself` });
    });
  }
  const named = (list: readonly string[]) => list.filter((id) => index.isStage(id) && id !== item.id);
  return {
    problems,
    after: [...named(item.requires).map((id): [string, string] => [item.id, id]), ...named(item.required_for).map((id): [string, string] => [id, item.id])],
  };
}

/** A group's requires and required_for name groups (or stages, which order nothing here); its `tasks` name tasks. */
function groupReferences(index: GraphItemIndex, item: GroupItem, i: number): ItemReferences {
  const requires = referencesOf(index, i, 'requires', item.requires, 'group', item.id);
  const requiredFor = referencesOf(index, i, 'required_for', item.required_for, 'group', item.id);
  const problems = [...requires.problems, ...requiredFor.problems];
  const members: [string, string][] = [];
  item.tasks.forEach((id, k) => {
    if (!index.isTask(id)) {
      if (!index.badIds.has(id)) problems.push({ field: `${index.atItem(i)}.tasks[${k}]`, message: `unknown task '${id}'` });
    } else members.push([id, item.id]);
  });
  return {
    problems,
    after: [...requires.kept.map((id): [string, string] => [item.id, id]), ...requiredFor.kept.map((id): [string, string] => [id, item.id])],
    members,
  };
}

/** A task's requires and required_for name tasks (or stages: checked against its own stage later), its stage and groups exist, it says where it runs, its condition compiles. */
function taskReferences(index: GraphItemIndex, item: TaskItem, i: number): ItemReferences {
  const at = index.atItem(i);
  const requires = referencesOf(index, i, 'requires', item.requires, 'task', item.id);
  const requiredFor = referencesOf(index, i, 'required_for', item.required_for, 'task', item.id);
  const problems = [...requires.problems, ...requiredFor.problems];
  if (item.stage !== undefined && !index.isStage(item.stage) && !index.badIds.has(item.stage))
    problems.push({ field: `${at}.stage`, message: `unknown stage '${item.stage}'` });
  (item.groups ?? []).forEach((id, k) => {
    if (id !== '*' && !index.isGroup(id) && !index.badIds.has(id)) problems.push({ field: `${at}.groups[${k}]`, message: `unknown group '${id}'` });
  });
  if (item.role === undefined && item.groups === undefined && !index.items.some((g) => g.type === 'group' && g.tasks.includes(item.id))) {
    problems.push({ field: at, message: "names no role and no groups: say where it runs (role: '*' for every node)" });
  }
  if (item.condition !== undefined) {
    const compiled = compileCondition(item.condition);
    if ('problem' in compiled) problems.push({ field: `${at}.condition`, message: compiled.problem });
  }
  return {
    problems,
    after: [...requires.kept.map((id): [string, string] => [item.id, id]), ...requiredFor.kept.map((id): [string, string] => [id, item.id])],
  };
}

/** Checks each reference of `list` and keeps the ids of the wanted kind (stage names are allowed everywhere and ordered by stage). */
function referencesOf(
  index: GraphItemIndex,
  i: number,
  key: string,
  list: readonly string[],
  wanted: 'task' | 'group',
  self: string,
): { kept: string[]; problems: FieldProblem[] } {
  const kept: string[] = [];
  const problems: FieldProblem[] = [];
  list.forEach((id, k) => {
    const field = `${index.atItem(i)}.${key}[${k}]`;
    const ok = wanted === 'task' ? index.isTask(id) : index.isGroup(id);
    if (id === self) problems.push({ field, message: `'${id}' names itself` });
    else if (ok) kept.push(id);
    else if (!index.isStage(id) && !index.badIds.has(id)) problems.push({ field, message: `unknown ${wanted} or stage '${id}'` });
  });
  return { kept, problems };
}

/** Step "cycles": each cycle of stages, groups and tasks, named by its members in document order. */
export function cycleProblems(index: GraphItemIndex, order: GraphOrder): { problems: FieldProblem[]; stagesInCycle: boolean } {
  const inCycles = (what: string, ids: readonly string[], edges: ReadonlyMap<string, ReadonlySet<string>>): FieldProblem[] =>
    stronglyConnectedComponents(ids, (id) => [...(edges.get(id) ?? [])])
      .filter((component) => component.length >= 2)
      .map((component) => {
        const members = [...component].sort((a, b) => (index.indexOf.get(a) ?? -1) - (index.indexOf.get(b) ?? -1));
        const first = index.indexOf.get(members[0]!);
        return { field: first === undefined ? 'stages' : index.atItem(first), message: `${what} in a cycle: ${members.join(' -> ')} -> ${members[0]}` };
      });
  const stages = inCycles('stages', order.stageIds, order.stageAfter);
  return {
    problems: [
      ...stages,
      ...inCycles('groups', [...order.groupAfter.keys()], order.groupAfter),
      ...inCycles('tasks', [...order.taskRequires.keys()], order.taskRequires),
    ],
    stagesInCycle: stages.length > 0,
  };
}

/** The stages in the order they run (no stage cycle). */
function orderStages(order: GraphOrder): string[] {
  return stableTopologicalOrder(order.stageIds, (id) => [...order.stageAfter.get(id)!]);
}

/** Each task's stage: its own or the default, undefined when it names an unknown one. */
function stagesOfTasks(index: GraphItemIndex): Map<string, string | undefined> {
  return new Map(
    index.items.filter(isTaskItem).map((item) => [item.id, index.isStage(item.stage ?? DEFAULT_TASK_STAGE) ? (item.stage ?? DEFAULT_TASK_STAGE) : undefined]),
  );
}

/**
 * Step "stages": a task may only wait for tasks of its own stage or an earlier one; a stage a task
 * names in requires must end before its own stage starts, one in required_for must start after its own ends.
 */
export function stageProblems(index: GraphItemIndex, order: Pick<GraphOrder, 'taskRequires'>, stages: readonly string[]): FieldProblem[] {
  const stageOf = stagesOfTasks(index);
  const stageRank = new Map(stages.map((id, k) => [id, k]));
  const problems: FieldProblem[] = [];
  for (const item of index.items.filter(isTaskItem)) {
    const own = stageOf.get(item.id);
    if (own === undefined) continue;
    const at = index.atItem(index.indexOf.get(item.id)!);
    for (const parent of order.taskRequires.get(item.id)!) {
      const theirs = stageOf.get(parent);
      if (theirs !== undefined && stageRank.get(theirs)! > stageRank.get(own)!) {
        problems.push({ field: at, message: `runs in stage ${own} but waits for '${parent}' of the later stage ${theirs}` });
      }
    }
    item.requires.forEach((id, k) => {
      if (index.isStage(id) && stageRank.get(id)! >= stageRank.get(own)!) {
        problems.push({
          field: `${at}.requires[${k}]`,
          message: `waits for stage ${id}, which does not end before the task's own stage ${own}: name a task, or move the task to a later stage`,
        });
      }
    });
    item.required_for.forEach((id, k) => {
      if (index.isStage(id) && stageRank.get(id)! <= stageRank.get(own)!) {
        problems.push({
          field: `${at}.required_for[${k}]`,
          message: `is needed by stage ${id}, which does not start after the task's own stage ${own}: move the task to an earlier stage`,
        });
      }
    });
  }
  return problems;
}

/** Step "graph": the valid graph, stages, groups and tasks each in the order they may run. */
function assembleTaskGraph(doc: GraphShell, index: GraphItemIndex, order: GraphOrder, stages: string[]): TaskGraph {
  const { items, indexOf, atItem } = index;
  const taskItems = items.filter(isTaskItem);
  const stageOf = stagesOfTasks(index);
  const taskOrder = stages.flatMap((stage) =>
    stableTopologicalOrder(
      taskItems.filter((item) => stageOf.get(item.id) === stage).map((item) => item.id),
      (id) => [...order.taskRequires.get(id)!],
    ),
  );
  const byId = new Map(taskItems.map((item) => [item.id, item]));
  const groupItems = items.filter((item) => item.type === 'group');
  const groupOrder = stableTopologicalOrder(
    groupItems.map((g) => g.id),
    (id) => [...order.groupAfter.get(id)!],
  );
  const groupById = new Map(groupItems.map((g) => [g.id, g]));

  return {
    clusterStatus: doc.cluster.status,
    attributes: doc.attributes,
    stages,
    groups: groupOrder.map((id) => {
      const group = groupById.get(id)!;
      return { id, roles: group.role, strategy: group.parameters.strategy, after: [...order.groupAfter.get(id)!], path: atItem(indexOf.get(id)!) };
    }),
    tasks: taskOrder.map((id): GraphTask => {
      const item = byId.get(id)!;
      const groups = [...(item.groups ?? []), ...(order.groupTasks.get(id) ?? [])];
      const compiled = item.condition === undefined ? undefined : compileCondition(item.condition);
      return {
        id,
        type: item.type,
        roles: item.role ?? [],
        groups: groups.includes('*') ? ['*'] : [...new Set(groups)],
        stage: stageOf.get(id)!,
        requires: [...order.taskRequires.get(id)!],
        parameters: item.parameters,
        ...(compiled && 'condition' in compiled ? { condition: { text: item.condition!, tree: compiled.condition } } : {}),
        path: atItem(indexOf.get(id)!),
      };
    }),
  };
}

/**
 * The attribute layers name tasks of the graph: a typo would otherwise be silently ignored. Roles and
 * nodes are the site's: the plan warns about those no node has (task-plan.ts).
 */
function attributeProblems(attributes: Attributes, isTask: (id: string) => boolean): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const path = (...parts: string[]) => ['attributes', ...parts].join('.');
  const check = (layer: Record<string, unknown>, ...where: string[]) => {
    for (const id of Object.keys(layer)) if (!isTask(id)) problems.push({ field: path(...where, id), message: `unknown task '${id}'` });
  };
  check(attributes.release, 'release');
  check(attributes.environment, 'environment');
  for (const [role, layer] of Object.entries(attributes.roles)) check(layer, 'roles', role);
  for (const [node, layer] of Object.entries(attributes.nodes)) check(layer, 'nodes', node);
  return problems;
}
