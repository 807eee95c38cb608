import type { SiteNode, SiteTiming } from '../site-file';
import { SimRequestError } from '../errors';
import type { Timeline } from '../timeline';

import type { TaskLogEntry } from '../../core/site/site-state';
import type { TaskResult } from '../../core/site/site-state';

export type { TaskLogEntry } from '../../core/site/site-state';

export interface TaskRunnerDeps {
  timing: Pick<SiteTiming, 'taskSeconds'>;
  nodes: readonly Pick<SiteNode, 'name' | 'faults'>[];
  timeline: Timeline;
  /** Site-wide list this model appends to when two tasks run on one node at once (the annealer allows one transition per node). */
  violations: string[];
}

/**
 * What the workload manager and the boot service tell the task log: task-graph drain, resume and
 * reboot tasks reach the site as those services' own requests, tagged with the task (see
 * taskOfReason and taskOfBootSession).
 */
export interface SiteTaskObserver {
  drained(node: string, reason: string, jobEndsAt: number | undefined): void;
  resumed(node: string, reason: string | undefined): void;
  bootStarted(session: string, node: string): void;
  bootEnded(session: string, node: string, ok: boolean): void;
}

/** `... task=<id>` at the end of a Slurm reason: the task-graph task that drained or resumed the node. */
const REASON_TAG = /(?:^|\s)task=([A-Za-z0-9][A-Za-z0-9_.-]*)$/;

/** The task a Slurm reason names with its `task=<id>` tag. */
export function taskOfReason(reason: string | undefined): string | undefined {
  return reason === undefined ? undefined : REASON_TAG.exec(reason)?.[1];
}

/** A reboot task's boot session: `t-<8 hex of the run>-<task id in base32>-<8 hex>` (adapters/site/tasks/site-tasks.ts names them so). */
const BOOT_SESSION = /^t-(?:[0-9a-f]{8}-)?([a-z2-7]+)-[0-9a-f]{8}$/;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** The task a boot session was created for, or undefined for any other session. */
export function taskOfBootSession(name: string): string | undefined {
  const encoded = BOOT_SESSION.exec(name)?.[1];
  if (encoded === undefined) return undefined;
  let bits = 0;
  let value = 0;
  const bytes: number[] = [];
  for (const char of encoded) {
    value = (value << 5) | BASE32.indexOf(char);
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * Task-graph tasks on the nodes. A command task (shell, puppet, upload_file, rsync, run through the
 * head node) takes `timing.taskSeconds` of simulated time, unless the node's `faults.tasks` says it
 * `fail`s (exit 1 at its end) or `hang`s (never ends: `timeout` at its timeout). Drain, resume and
 * reboot tasks are logged from the services that carry them out. Every run is logged.
 */
export class TaskRunnerModel implements SiteTaskObserver {
  private readonly log: TaskLogEntry[] = [];
  private readonly running = new Map<string, TaskLogEntry>();
  private readonly faults: Map<string, SiteNode['faults']>;
  private readonly origin: number;
  /** Boot session and node -> the reboot task's entry. */
  private readonly boots = new Map<string, TaskLogEntry>();

  constructor(private readonly deps: TaskRunnerDeps) {
    this.faults = new Map(deps.nodes.map((n) => [n.name, n.faults]));
    this.origin = deps.timeline.sync();
  }

  /**
   * Starts command task `task` on `node`; it ends `ok`, `failed` or, past `timeoutSeconds` (the
   * node's `timeout` command: every task has one), `timeout`. The entry fills in `end` and `result`.
   */
  start(node: string, task: string, timeoutSeconds: number): TaskLogEntry {
    const now = this.deps.timeline.sync();
    const entry = this.begin(node, task, now);
    const fault = this.faults.get(node)?.tasks[task];
    this.deps.timeline.at(now + timeoutSeconds * 1000, (at) => this.end(entry, at, 'timeout'));
    if (fault !== 'hang') this.deps.timeline.at(now + this.deps.timing.taskSeconds * 1000, (at) => this.end(entry, at, fault === 'fail' ? 'failed' : 'ok'));
    return entry;
  }

  /** A drain task is done once the node runs no job: at once when idle, else when its job ends. */
  drained(node: string, reason: string, jobEndsAt: number | undefined): void {
    const task = taskOfReason(reason);
    if (task === undefined) return;
    const now = this.deps.timeline.sync();
    const entry = this.begin(node, task, now);
    if (jobEndsAt === undefined || jobEndsAt <= now) this.end(entry, now, 'ok');
    else if (Number.isFinite(jobEndsAt)) this.deps.timeline.at(jobEndsAt, (at) => this.end(entry, at, 'ok'));
  }

  resumed(node: string, reason: string | undefined): void {
    const task = taskOfReason(reason);
    if (task === undefined) return;
    const now = this.deps.timeline.sync();
    this.end(this.begin(node, task, now), now, 'ok');
  }

  bootStarted(session: string, node: string): void {
    const task = taskOfBootSession(session);
    if (task === undefined) return;
    this.boots.set(`${session}/${node}`, this.begin(node, task, this.deps.timeline.sync()));
  }

  bootEnded(session: string, node: string, ok: boolean): void {
    const entry = this.boots.get(`${session}/${node}`);
    if (!entry) return;
    this.boots.delete(`${session}/${node}`);
    this.end(entry, this.deps.timeline.sync(), ok ? 'ok' : 'failed');
  }

  /** Every task run so far, in start order (copies). */
  taskLog(): TaskLogEntry[] {
    this.deps.timeline.sync();
    return this.log.map((entry) => ({ ...entry }));
  }

  private begin(node: string, task: string, now: number): TaskLogEntry {
    if (!this.faults.has(node)) throw new SimRequestError(400, `unknown node '${node}'`);
    const other = this.running.get(node);
    if (other !== undefined) {
      this.deps.violations.push(`${new Date(now).toISOString()} task ${task} started on ${node} while ${other.task} still ran there`);
    }
    const entry: TaskLogEntry = { node, task, start: this.seconds(now) };
    this.log.push(entry);
    this.running.set(node, entry);
    return entry;
  }

  private end(entry: TaskLogEntry, at: number, result: TaskResult): void {
    if (entry.result !== undefined) return;
    Object.assign(entry, { end: this.seconds(at), result });
    if (this.running.get(entry.node) === entry) this.running.delete(entry.node);
  }

  private seconds(at: number): number {
    return (at - this.origin) / 1000;
  }
}
