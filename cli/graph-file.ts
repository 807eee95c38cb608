import type { Command } from 'commander';
import { documentFormat, readDocumentFile } from '../adapters/document-file';
import { parseNodeNameList } from '../core/group-deployment';
import { parseDocumentText } from '../core/document-text';
import { parseTaskGraph, type TaskGraph, type TaskSelection } from '../core/task-graph';

/** Reads and validates a task graph file (YAML, or JSON by its `.json` extension); problems name the file. */
export async function loadGraphFile(path: string): Promise<TaskGraph> {
  return (await readGraphFile(path)).graph;
}

/**
 * A graph file validated, and as a workflow takes it: YAML as its text (comments and all), JSON as
 * the document (JSON's own reader, so that a problem is reported as the file's).
 */
export async function readGraphFile(path: string): Promise<{ graph: TaskGraph; request: string | unknown }> {
  const subject = `task graph ${path}`;
  // Strictly read (UTF-8 only): a lossy decode would plan a command the file never held.
  const text = await readDocumentFile(path, subject);
  const format = documentFormat(path);
  const graph = parseTaskGraph(text, format, subject);
  const parsed = parseDocumentText(text, format);
  return { graph, request: format === 'yaml' || 'problems' in parsed ? text : parsed.value };
}

/** The options that select part of a task graph, as `fuel node --tasks/--skip/--start/--end` (`--nodes` where the command has none of its own). */
export function addTaskSelectionOptions(command: Command, options: { nodes: boolean } = { nodes: true }): Command {
  command
    .option('--tasks <ids>', 'comma-separated task ids: run only these')
    .option('--skip <ids>', 'comma-separated task ids: leave these out')
    .option('--start <id>', 'start at this task (or stage): it, what depends on it, and every later stage')
    .option('--end <id>', 'end at this task (or stage): it, what it requires, and every earlier stage');
  return options.nodes ? command.option('--nodes <names>', 'comma-separated node names: only these nodes') : command;
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
