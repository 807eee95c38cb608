import { parseDocumentText } from '../document-text';
import { InvalidInputError, type FieldProblem } from '../errors';
import { stableTopologicalOrder, stronglyConnectedComponents } from '../graph/graph-algorithms';
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
  type GroupStrategy,
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

/** Validates a graph document already read: schema, references, cycles, stages, conditions. */
export function validateTaskGraph(input: unknown, subject = 'task graph'): TaskGraph {
  const bare = Array.isArray(input);
  const result = taskGraphShellSchema.safeParse(bare ? { tasks: input } : input);
  if (!result.success) throw new InvalidInputError(subject, toFieldProblems(result.error));
  const doc = result.data;
  // A bare list's items are named `[3]`, an object's `tasks[3]`.
  const at = (i: number) => (bare ? `[${i}]` : `tasks[${i}]`);
  const problems: FieldProblem[] = [];
  // Items are read one by one: a bad item is reported and left out of the checks that follow, but
  // its id (when it has one) still counts as known, so references to it are not reported too.
  const items: GraphItem[] = [];
  /** Where each good item is in the document. */
  const positions: number[] = [];
  const badIds = new Set<string>();
  doc.tasks.forEach((raw, i) => {
    const item = graphItemSchema.safeParse(raw);
    if (item.success) {
      items.push(item.data);
      positions.push(i);
      return;
    }
    problems.push(...toFieldProblems(item.error).map((p) => ({ ...p, field: p.field ? `${at(i)}.${p.field}` : at(i) })));
    const id = (raw as { id?: unknown } | null)?.id;
    if (typeof id === 'string') badIds.add(id);
  });
  const atItem = (k: number) => at(positions[k]!);

  const indexOf = new Map<string, number>();
  items.forEach((item, i) => {
    if (indexOf.has(item.id)) problems.push({ field: `${atItem(i)}.id`, message: `duplicate id '${item.id}' (first at ${atItem(indexOf.get(item.id)!)})` });
    else indexOf.set(item.id, i);
  });
  const kindOf = (id: string): GraphItem['type'] | 'stage' | undefined =>
    (DEFAULT_STAGES as readonly string[]).includes(id) ? 'stage' : indexOf.has(id) ? items[indexOf.get(id)!]!.type : undefined;
  const isStage = (id: string) => kindOf(id) === 'stage';
  const isGroup = (id: string) => kindOf(id) === 'group';
  const isTask = (id: string) => {
    const kind = kindOf(id);
    return kind !== undefined && kind !== 'group' && kind !== 'stage';
  };

  /** Checks each reference of `list` and returns the ids of the wanted kind (stage names are allowed everywhere and ordered by stage). */
  const refs = (i: number, key: string, list: readonly string[], wanted: 'task' | 'group' | 'stage', self: string): string[] => {
    const kept: string[] = [];
    list.forEach((id, k) => {
      const field = `${atItem(i)}.${key}[${k}]`;
      const ok = wanted === 'task' ? isTask(id) : wanted === 'group' ? isGroup(id) : false;
      if (id === self) problems.push({ field, message: `'${id}' names itself` });
      else if (ok) kept.push(id);
      else if (!isStage(id) && !badIds.has(id)) problems.push({ field, message: `unknown ${wanted === 'stage' ? 'stage' : `${wanted} or stage`} '${id}'` });
    });
    return kept;
  };

  // Stages: the defaults in order, then declared ones; requires/required_for order them.
  const stageIds = [
    ...DEFAULT_STAGES,
    ...items.filter((item) => item.type === 'stage' && !(DEFAULT_STAGES as readonly string[]).includes(item.id)).map((item) => item.id),
  ];
  const stageAfter = new Map<string, Set<string>>(stageIds.map((id) => [id, new Set<string>()]));
  DEFAULT_STAGES.forEach((id, k) => k > 0 && stageAfter.get(id)!.add(DEFAULT_STAGES[k - 1]!));
  const groupAfter = new Map<string, Set<string>>();
  const taskRequires = new Map<string, Set<string>>();
  const groupTasks = new Map<string, string[]>();
  items.forEach((item) => {
    if (item.type === 'group') groupAfter.set(item.id, new Set());
    else if (isTaskItem(item)) taskRequires.set(item.id, new Set());
  });

  items.forEach((item, i) => {
    if (item.type === 'stage') {
      const check = (key: 'requires' | 'required_for') =>
        item[key].forEach((id, k) => {
          if (!isStage(id)) {
            if (!badIds.has(id)) problems.push({ field: `${atItem(i)}.${key}[${k}]`, message: `unknown stage '${id}'` });
          } else if (id === item.id) problems.push({ field: `${atItem(i)}.${key}[${k}]`, message: `'${id}' names itself` });
        });
      check('requires');
      check('required_for');
      item.requires.filter((id) => isStage(id) && id !== item.id).forEach((id) => stageAfter.get(item.id)!.add(id));
      item.required_for.filter((id) => isStage(id) && id !== item.id).forEach((id) => stageAfter.get(id)!.add(item.id));
    } else if (item.type === 'group') {
      refs(i, 'requires', item.requires, 'group', item.id).forEach((id) => groupAfter.get(item.id)!.add(id));
      refs(i, 'required_for', item.required_for, 'group', item.id).forEach((id) => groupAfter.get(id)!.add(item.id));
      item.tasks.forEach((id, k) => {
        if (!isTask(id)) {
          if (!badIds.has(id)) problems.push({ field: `${atItem(i)}.tasks[${k}]`, message: `unknown task '${id}'` });
        } else groupTasks.set(id, [...(groupTasks.get(id) ?? []), item.id]);
      });
    } else {
      refs(i, 'requires', item.requires, 'task', item.id).forEach((id) => taskRequires.get(item.id)!.add(id));
      refs(i, 'required_for', item.required_for, 'task', item.id).forEach((id) => taskRequires.get(id)!.add(item.id));
      if (item.stage !== undefined && !isStage(item.stage) && !badIds.has(item.stage))
        problems.push({ field: `${atItem(i)}.stage`, message: `unknown stage '${item.stage}'` });
      (item.groups ?? []).forEach((id, k) => {
        if (id !== '*' && !isGroup(id) && !badIds.has(id)) problems.push({ field: `${atItem(i)}.groups[${k}]`, message: `unknown group '${id}'` });
      });
      if (
        item.role === undefined &&
        item.groups === undefined &&
        !groupTasks.has(item.id) &&
        !items.some((g) => g.type === 'group' && g.tasks.includes(item.id))
      ) {
        problems.push({ field: atItem(i), message: "names no role and no groups: say where it runs (role: '*' for every node)" });
      }
      if (item.condition !== undefined) {
        const compiled = compileCondition(item.condition);
        if ('problem' in compiled) problems.push({ field: `${atItem(i)}.condition`, message: compiled.problem });
      }
    }
  });

  // Cycles, each named by its members.
  const cycleProblems = (what: string, ids: readonly string[], edges: Map<string, Set<string>>) => {
    for (const component of stronglyConnectedComponents(ids, (id) => [...(edges.get(id) ?? [])])) {
      if (component.length < 2) continue;
      const members = [...component].sort((a, b) => (indexOf.get(a) ?? -1) - (indexOf.get(b) ?? -1));
      const first = indexOf.get(members[0]!);
      problems.push({ field: first === undefined ? 'stages' : atItem(first), message: `${what} in a cycle: ${members.join(' -> ')} -> ${members[0]}` });
    }
  };
  const stageProblemsBefore = problems.length;
  cycleProblems('stages', stageIds, stageAfter);
  const stagesInCycle = problems.length > stageProblemsBefore;
  cycleProblems('groups', [...groupAfter.keys()], groupAfter);
  cycleProblems('tasks', [...taskRequires.keys()], taskRequires);

  const taskItems = items.filter(isTaskItem);
  const stageOf = new Map(taskItems.map((item) => [item.id, isStage(item.stage ?? DEFAULT_TASK_STAGE) ? (item.stage ?? DEFAULT_TASK_STAGE) : undefined]));
  // The stage checks need an order of the stages; without one (a stage cycle) that cycle is the problem to fix first.
  const stages = stagesInCycle ? [] : stableTopologicalOrder(stageIds, (id) => [...stageAfter.get(id)!]);
  const stageRank = new Map(stages.map((id, k) => [id, k]));
  if (!stagesInCycle) {
    taskItems.forEach((item) => {
      const own = stageOf.get(item.id);
      if (own === undefined) return;
      const at = atItem(indexOf.get(item.id)!);
      // A task may only wait for tasks of its own stage or an earlier one.
      for (const parent of taskRequires.get(item.id)!) {
        const theirs = stageOf.get(parent);
        if (theirs !== undefined && stageRank.get(theirs)! > stageRank.get(own)!) {
          problems.push({ field: at, message: `runs in stage ${own} but waits for '${parent}' of the later stage ${theirs}` });
        }
      }
      // A stage a task names in requires must end before its own stage starts; one in required_for must start after its own ends.
      item.requires.forEach((id, k) => {
        if (isStage(id) && stageRank.get(id)! >= stageRank.get(own)!) {
          problems.push({
            field: `${at}.requires[${k}]`,
            message: `waits for stage ${id}, which does not end before the task's own stage ${own}: name a task, or move the task to a later stage`,
          });
        }
      });
      item.required_for.forEach((id, k) => {
        if (isStage(id) && stageRank.get(id)! <= stageRank.get(own)!) {
          problems.push({
            field: `${at}.required_for[${k}]`,
            message: `is needed by stage ${id}, which does not start after the task's own stage ${own}: move the task to an earlier stage`,
          });
        }
      });
    });
  }
  problems.push(...attributeProblems(doc.attributes, (id) => isTask(id) || badIds.has(id)));
  if (problems.length > 0) throw new InvalidInputError(subject, problems);

  const taskOrder = stages.flatMap((stage) =>
    stableTopologicalOrder(
      taskItems.filter((item) => stageOf.get(item.id) === stage).map((item) => item.id),
      (id) => [...taskRequires.get(id)!],
    ),
  );
  const byId = new Map(taskItems.map((item) => [item.id, item]));
  const groupItems = items.filter((item) => item.type === 'group');
  const groupOrder = stableTopologicalOrder(
    groupItems.map((g) => g.id),
    (id) => [...groupAfter.get(id)!],
  );
  const groupById = new Map(groupItems.map((g) => [g.id, g]));

  return {
    clusterStatus: doc.cluster.status,
    attributes: doc.attributes,
    stages,
    groups: groupOrder.map((id) => {
      const group = groupById.get(id)!;
      return { id, roles: group.role, strategy: group.parameters.strategy, after: [...groupAfter.get(id)!], path: atItem(indexOf.get(id)!) };
    }),
    tasks: taskOrder.map((id): GraphTask => {
      const item = byId.get(id)!;
      const groups = [...(item.groups ?? []), ...(groupTasks.get(id) ?? [])];
      const compiled = item.condition === undefined ? undefined : compileCondition(item.condition);
      return {
        id,
        type: item.type,
        roles: item.role ?? [],
        groups: groups.includes('*') ? ['*'] : [...new Set(groups)],
        stage: stageOf.get(id)!,
        requires: [...taskRequires.get(id)!],
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
