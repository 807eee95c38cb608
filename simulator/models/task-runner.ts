import type { SiteNode, SiteTiming } from '../site-file';
import { SimRequestError } from '../errors';
import type { Timeline } from '../timeline';

export type TaskResult = 'ok' | 'failed' | 'timeout';

/** One task run on one node, in simulated seconds from the simulator's start; `end` and `result` are absent while it runs. */
export interface TaskLogEntry {
  node: string;
  task: string;
  start: number;
  end?: number;
  result?: TaskResult;
}

export interface TaskRunnerDeps {
  timing: Pick<SiteTiming, 'taskSeconds'>;
  nodes: readonly Pick<SiteNode, 'name' | 'faults'>[];
  timeline: Timeline;
  /** Site-wide list this model appends to when two tasks run on one node at once (the annealer allows one transition per node). */
  violations: string[];
}

/**
 * Task-graph tasks (shell, puppet, upload_file, rsync) run on the nodes: each takes
 * `timing.taskSeconds` of simulated time, unless the node's `faults.tasks` says the task `fail`s
 * (exit 1 at its end) or `hang`s (never ends: `timeout` once its timeout passes). Every run is logged.
 */
export class TaskRunnerModel {
  private readonly log: TaskLogEntry[] = [];
  private readonly running = new Map<string, TaskLogEntry>();
  private readonly faults: Map<string, SiteNode['faults']>;
  private readonly origin: number;

  constructor(private readonly deps: TaskRunnerDeps) {
    this.faults = new Map(deps.nodes.map((n) => [n.name, n.faults]));
    this.origin = deps.timeline.sync();
  }

  /** Starts `task` on `node`; the entry fills in `end` and `result` when it ends. */
  start(node: string, task: string, timeoutSeconds?: number): TaskLogEntry {
    const now = this.deps.timeline.sync();
    if (!this.faults.has(node)) throw new SimRequestError(400, `unknown node '${node}'`);
    const other = this.running.get(node);
    if (other !== undefined) {
      this.deps.violations.push(`${new Date(now).toISOString()} task ${task} started on ${node} while ${other.task} still ran there`);
    }
    const entry: TaskLogEntry = { node, task, start: this.seconds(now) };
    this.log.push(entry);
    this.running.set(node, entry);
    const fault = this.faults.get(node)?.tasks[task];
    const end = (at: number, result: TaskResult) => {
      if (entry.result !== undefined) return;
      Object.assign(entry, { end: this.seconds(at), result });
      if (this.running.get(node) === entry) this.running.delete(node);
    };
    if (timeoutSeconds !== undefined) this.deps.timeline.at(now + timeoutSeconds * 1000, (at) => end(at, 'timeout'));
    if (fault !== 'hang') this.deps.timeline.at(now + this.deps.timing.taskSeconds * 1000, (at) => end(at, fault === 'fail' ? 'failed' : 'ok'));
    return entry;
  }

  /** Every task run so far, in start order (copies). */
  taskLog(): TaskLogEntry[] {
    this.deps.timeline.sync();
    return this.log.map((entry) => ({ ...entry }));
  }

  private seconds(at: number): number {
    return (at - this.origin) / 1000;
  }
}
