import { documentFormat, readDocumentFile } from '../adapters/document-file';
import { parseNodeNameList } from '../core/group-deployment';
import { parseTaskGraph, type TaskGraph, type TaskGraphNode, type TaskSelection } from '../core/task-graph';
import type { InventoryNode } from '../ports/site';

/** Reads and validates a task graph file (YAML, or JSON by its `.json` extension); problems name the file. */
export async function loadGraphFile(path: string): Promise<TaskGraph> {
  const subject = `task graph ${path}`;
  return parseTaskGraph(await readDocumentFile(path, subject), documentFormat(path), subject);
}

export interface TaskSelectionOptions {
  tasks?: string;
  skip?: string;
  start?: string;
  end?: string;
  nodes?: string;
}

/** --tasks, --skip, --start, --end, --nodes as the core's selection (comma-separated lists, read like node lists). */
export function taskSelectionOf(options: TaskSelectionOptions): TaskSelection {
  return {
    ...(options.tasks === undefined ? {} : { tasks: parseNodeNameList(options.tasks) }),
    ...(options.skip === undefined ? {} : { skip: parseNodeNameList(options.skip) }),
    ...(options.start === undefined ? {} : { start: options.start }),
    ...(options.end === undefined ? {} : { end: options.end }),
    ...(options.nodes === undefined ? {} : { nodes: parseNodeNameList(options.nodes) }),
  };
}

/** The inventory's nodes as the task planner sees them (a node without roles takes part in no graph). */
export function taskGraphNodes(inventory: readonly InventoryNode[]): TaskGraphNode[] {
  return inventory.map((node) => ({ name: node.name, roles: node.roles ?? [] }));
}
