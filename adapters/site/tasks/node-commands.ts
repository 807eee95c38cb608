import { chunkHostlist, expandHostlist } from '../../../core/site/hostlist';
import { validNodeNames } from '../../../core/site/names';
import type { TaskType } from '../../../core/task-graph/graph-document';
import type { CommandResult } from '../../../ports/command-transport';
import type { TaskOutcome } from '../../../ports/task-executor';
import { fillTemplate, shellQuote } from '../commands/shell-quote';
import { TASK_EXIT_MARKER } from '../../../core/site/task-exit-marker';

/**
 * The commands a task-graph task runs: its script on the node, wrapped so that it stops at its
 * timeout and reports its exit status, and the head-node command (the site profile's node-exec
 * form, `pdsh -S -w {nodes} {command}` by default) that reaches the nodes.
 */

/** The task types that run a command on the node. */
export const COMMAND_TASK_TYPES: readonly TaskType[] = ['shell', 'puppet', 'upload_file', 'rsync'];

/** coreutils `timeout`'s exit status when it stopped the command. */
const TIMEOUT_EXIT = 124;

const text = (parameters: Record<string, unknown>, key: string): string | undefined =>
  typeof parameters[key] === 'string' ? (parameters[key] as string) : undefined;
const needed = (parameters: Record<string, unknown>, key: string, type: TaskType): string => {
  const value = text(parameters, key);
  if (value === undefined || value === '') throw new Error(`a ${type} task needs parameters.${key}`);
  return value;
};
const inDir = (cwd: string | undefined, script: string) => (cwd ? `cd ${shellQuote(cwd)} && ${script}` : script);

/**
 * The script a task runs on its node, by type (Fuel's task types): `shell` runs `cmd` as written
 * (the graph's author writes shell); `puppet` applies the manifest (puppet's detailed exit codes: 0
 * and 2 are success); `upload_file` writes `data` to `path`; `rsync` copies `src` to `dst`. Every
 * value but `cmd` is one quoted word.
 */
export function taskScript(type: TaskType, parameters: Record<string, unknown>): string {
  switch (type) {
    case 'shell':
      return inDir(text(parameters, 'cwd'), needed(parameters, 'cmd', type));
    case 'puppet': {
      const modules = text(parameters, 'puppet_modules');
      const apply = [
        'puppet apply --detailed-exitcodes',
        ...(modules ? [`--modulepath=${shellQuote(modules)}`] : []),
        shellQuote(needed(parameters, 'puppet_manifest', type)),
      ].join(' ');
      return inDir(text(parameters, 'cwd'), `${apply}; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 2 ]`);
    }
    case 'upload_file': {
      const path = needed(parameters, 'path', type);
      const data = Buffer.from(typeof parameters.data === 'string' ? parameters.data : '', 'utf8').toString('base64');
      return `mkdir -p -- "$(dirname -- ${shellQuote(path)})" && printf %s ${shellQuote(data)} | base64 -d > ${shellQuote(path)}`;
    }
    case 'rsync':
      return `rsync -c -r --delete -- ${shellQuote(needed(parameters, 'src', type))} ${shellQuote(needed(parameters, 'dst', type))}`;
    default:
      throw new Error(`a ${type} task runs no command on the node`);
  }
}

/**
 * What the node's shell runs: the script under `timeout`, its output in a log on the node (so that
 * the head node's output holds only the exit statuses), then the status. `ROLLOUT_TASK` names the
 * task to the script.
 */
export function nodeTaskCommand(task: string, timeoutSeconds: number, script: string): string {
  const log = `/var/tmp/rollout-task-${task}.log`;
  return `ROLLOUT_TASK=${shellQuote(task)} timeout ${Math.ceil(timeoutSeconds)} /bin/sh -c ${shellQuote(script)} </dev/null >>${shellQuote(log)} 2>&1; echo "${TASK_EXIT_MARKER}$?"`;
}

/**
 * The head-node commands that run `command` on `nodes` through the node-exec form: one per `fanout`
 * nodes as a hostlist with `{nodes}`, one per node with `{node}`. Every node name is checked first.
 */
export function headNodeCommands(nodeExec: string, nodes: readonly string[], command: string, fanout: number): { nodes: string[]; script: string }[] {
  const checked = validNodeNames(nodes);
  if (nodeExec.includes('{node}')) return checked.map((node) => ({ nodes: [node], script: fillTemplate(nodeExec, { node, command }) }));
  return chunkHostlist(checked, fanout).map((hostlist) => ({ nodes: expandHostlist(hostlist), script: fillTemplate(nodeExec, { nodes: hostlist, command }) }));
}

const EXIT_LINE = new RegExp(`^(?:(\\S+): )?${TASK_EXIT_MARKER}(\\d+)\\s*$`);

/** Each node's outcome from the exit-status lines; a node that printed none did not run the task (unreachable, say). */
export function nodeTaskOutcomes(nodes: readonly string[], result: CommandResult, timeoutSeconds: number): Map<string, TaskOutcome> {
  const statuses = new Map<string, number>();
  for (const line of result.stdout.split('\n')) {
    const match = EXIT_LINE.exec(line.trim());
    if (!match) continue;
    // Without pdsh's prefix the command reached one node (the `{node}` form).
    const node = match[1] ?? (nodes.length === 1 ? nodes[0] : undefined);
    if (node !== undefined) statuses.set(node, Number(match[2]));
  }
  const outcomes = new Map<string, TaskOutcome>();
  for (const node of nodes) {
    const status = statuses.get(node);
    if (status === 0) outcomes.set(node, { result: 'ok' });
    else if (status === TIMEOUT_EXIT) outcomes.set(node, { result: 'timeout', detail: `stopped on the node after ${timeoutSeconds} s` });
    else if (status !== undefined) outcomes.set(node, { result: 'failed', detail: `exit ${status}` });
    else {
      const why = result.stdoutTruncated ? "the head node's output was cut short" : stderrOf(result, node) || `the node-exec command exited ${result.exitCode}`;
      outcomes.set(node, { result: 'failed', detail: `no exit status from the node: ${why}` });
    }
  }
  return outcomes;
}

/** The stderr lines that name the node (pdsh prefixes them), else the whole stderr, short. */
function stderrOf(result: CommandResult, node: string): string {
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  const own = lines.filter((line) => line.includes(`${node}:`));
  return (own.length > 0 ? own : lines).join('; ').slice(0, 300);
}
