import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { describeError, InvalidInputError } from '../core/errors';
import { parseNodeNameList } from '../core/group-deployment';
import { parseTaskGraph, type TaskGraph, type TaskSelection } from '../core/task-graph';

/** Reads and validates a task graph file (YAML, or JSON by its `.json` extension); problems name the file. */
export async function loadGraphFile(path: string): Promise<TaskGraph> {
  const subject = `task graph ${path}`;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new InvalidInputError(subject, [{ field: '', message: `cannot read it: ${describeError(err)}` }]);
  }
  return parseTaskGraph(text, extname(path).toLowerCase() === '.json' ? 'json' : 'yaml', subject);
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
