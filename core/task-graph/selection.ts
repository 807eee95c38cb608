import { InvalidInputError, type FieldProblem } from '../errors';
import { descendantsOf } from '../graph/graph-algorithms';
import type { TaskGraph } from './parse-task-graph';

/**
 * Part of the graph, as `fuel node --tasks/--skip/--start/--end`: `tasks` only these; `skip` all
 * but these; `start` this task and what depends on it, and every later stage (a stage: it and every
 * later one); `end` this task and what it requires, and every earlier stage (a stage: it and every
 * earlier one); both: the subgraph from start up to end (none between them is refused).
 * `nodes`: only these nodes of the site.
 */
export interface TaskSelection {
  tasks?: readonly string[];
  skip?: readonly string[];
  start?: string;
  end?: string;
  nodes?: readonly string[];
}

export type DropReason = 'not in --tasks' | 'skipped' | 'before --start' | 'after --end';

/** The tasks the selection leaves out, each with why; throws naming every unknown task or stage. */
export function tasksLeftOut(graph: TaskGraph, selection: TaskSelection): Map<string, DropReason> {
  const ids = new Set(graph.tasks.map((task) => task.id));
  const problems: FieldProblem[] = [];
  const checkTasks = (field: string, list: readonly string[] | undefined) =>
    list?.forEach((id) => !ids.has(id) && problems.push({ field, message: `unknown task '${id}'` }));
  checkTasks('tasks', selection.tasks);
  checkTasks('skip', selection.skip);
  for (const field of ['start', 'end'] as const) {
    const id = selection[field];
    if (id !== undefined && !ids.has(id) && !graph.stages.includes(id)) problems.push({ field, message: `unknown task or stage '${id}'` });
  }
  if (problems.length > 0) throw new InvalidInputError('task selection', problems);

  const requires = new Map(graph.tasks.map((task) => [task.id, task.requires]));
  const dependants = new Map<string, string[]>(graph.tasks.map((task) => [task.id, []]));
  for (const task of graph.tasks) for (const parent of task.requires) dependants.get(parent)!.push(task.id);
  const stageRank = new Map(graph.stages.map((stage, k) => [stage, k]));
  const rankOf = new Map(graph.tasks.map((task) => [task.id, stageRank.get(task.stage)!]));

  // As in Fuel, where the stages are nodes of the graph: after a task come its dependants and every
  // task of a later stage; before it, what it requires and every task of an earlier stage.
  const from =
    selection.start === undefined
      ? undefined
      : reach(
          selection.start,
          (id) => dependants.get(id) ?? [],
          (rank, stage) => rank >= stage,
          (rank, stage) => rank > stage,
        );
  const upTo =
    selection.end === undefined
      ? undefined
      : reach(
          selection.end,
          (id) => requires.get(id) ?? [],
          (rank, stage) => rank <= stage,
          (rank, stage) => rank < stage,
        );
  function reach(
    start: string,
    next: (id: string) => readonly string[],
    inStage: (rank: number, stage: number) => boolean,
    beyondStage: (rank: number, stage: number) => boolean,
  ): Set<string> {
    const startIsTask = ids.has(start);
    const stage = startIsTask ? rankOf.get(start)! : stageRank.get(start)!;
    const reached = new Set(graph.tasks.filter((task) => (startIsTask ? beyondStage : inStage)(rankOf.get(task.id)!, stage)).map((task) => task.id));
    if (startIsTask) for (const id of [start, ...descendantsOf(start, next)]) reached.add(id);
    return reached;
  }
  if (from && upTo && ![...from].some((id) => upTo.has(id))) {
    throw new InvalidInputError('task selection', [
      { field: 'end', message: `'${selection.end}' does not come after --start '${selection.start}': no task is between them` },
    ]);
  }

  const only = selection.tasks === undefined ? undefined : new Set(selection.tasks);
  const skip = new Set(selection.skip ?? []);
  const out = new Map<string, DropReason>();
  for (const { id } of graph.tasks) {
    if (only && !only.has(id)) out.set(id, 'not in --tasks');
    else if (skip.has(id)) out.set(id, 'skipped');
    else if (from && !from.has(id)) out.set(id, 'before --start');
    else if (upTo && !upTo.has(id)) out.set(id, 'after --end');
  }
  return out;
}
