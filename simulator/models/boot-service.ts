import type { SiteNode, SiteTiming } from '../site-file';
import { SimRequestError } from '../errors';
import type { Timeline } from '../timeline';
import type { InventoryModel } from './inventory';
import type { NodeChangeLog } from './node-changes';
import type { SiteTaskObserver } from './task-runner';
import type { WorkloadManagerModel } from './workload-manager';

export type BootOutcome = 'pending' | 'booting' | 'succeeded' | 'failed';

export interface BootSessionRecord {
  name: string;
  operation: 'reboot';
  templateName: string;
  limit: string;
  createdAt: number;
  /** When the last node succeeded or failed; undefined while running. */
  completedAt?: number;
  status: 'running' | 'complete';
  components: Record<string, BootOutcome>;
}

/** A node as BOS v2 tracks it: the session that last took it over and its outcome there. */
export interface BootComponentRecord {
  id: string;
  session: string;
  outcome: BootOutcome;
}

interface Session {
  name: string;
  operation: 'reboot';
  templateName: string;
  limit: string;
  createdAt: number;
  components: Map<string, BootOutcome>;
  /** Nodes that succeeded or failed: the session is complete when it reaches components.size. */
  finished: number;
  completedAt?: number;
}

export interface BootServiceDeps {
  templates: readonly string[];
  timing: Pick<SiteTiming, 'bootSeconds' | 'returnSeconds'>;
  nodes: readonly Pick<SiteNode, 'name' | 'faults'>[];
  workloadManager: WorkloadManagerModel;
  inventory: InventoryModel;
  timeline: Timeline;
  /** Site-wide list this model appends to when two sessions work on one node at once. */
  violations: string[];
  /** Told of every node's boot, so that those of task-graph reboot tasks reach the task log. */
  observer?: Pick<SiteTaskObserver, 'bootStarted' | 'bootEnded'>;
  /** Where every boot is logged with the run its session's name names. */
  changes?: NodeChangeLog;
}

/** BOS: boot sessions that reboot the nodes of a limit, each node ending succeeded, failed or hung. */
export class BootServiceModel {
  private readonly sessions = new Map<string, Session>();
  /** Node → the session whose boot of it is still under way. */
  private readonly bootingIn = new Map<string, string>();
  private readonly bootCounts = new Map<string, number>();
  /** Node → the last session that took it over (BOS's component `session`). */
  private readonly managedBy = new Map<string, Session>();
  private readonly templates: Set<string>;
  private readonly faults: Map<string, SiteNode['faults']>;

  constructor(private readonly deps: BootServiceDeps) {
    this.templates = new Set(deps.templates);
    this.faults = new Map(deps.nodes.map((n) => [n.name, n.faults]));
  }

  templateExists(name: string): boolean {
    return this.templates.has(name);
  }

  bootCount(node: string): number {
    return this.bootCounts.get(node) ?? 0;
  }

  getSession(name: string): BootSessionRecord | undefined {
    this.deps.timeline.sync();
    const session = this.sessions.get(name);
    return session && toRecord(session);
  }

  /** Components BOS knows, in the order they were first booted; filtered by session and/or ids. */
  components(filter: { session?: string; ids?: readonly string[] } = {}): BootComponentRecord[] {
    this.deps.timeline.sync();
    const ids = filter.ids ? new Set(filter.ids) : undefined;
    const records: BootComponentRecord[] = [];
    for (const [id, session] of this.managedBy) {
      if (ids && !ids.has(id)) continue;
      if (filter.session !== undefined && session.name !== filter.session) continue;
      records.push({ id, session: session.name, outcome: session.components.get(id)! });
    }
    return records;
  }

  createSession(request: { name: string; operation: 'reboot'; templateName: string; limit: string }): BootSessionRecord {
    const now = this.deps.timeline.sync();
    if (this.sessions.has(request.name)) throw new SimRequestError(409, `session '${request.name}' already exists`);
    if (!this.templates.has(request.templateName)) throw new SimRequestError(400, `session template '${request.templateName}' does not exist`);
    const nodes = this.resolveLimit(request.limit);
    const session: Session = { ...request, createdAt: now, components: new Map(), finished: 0 };
    this.sessions.set(session.name, session);
    for (const node of nodes) this.boot(session, node, now);
    return toRecord(session);
  }

  /** BOS limits name a group, or list nodes separated by commas. */
  private resolveLimit(limit: string): string[] {
    const { inventory } = this.deps;
    if (inventory.hasGroup(limit)) return inventory.getGroup(limit).members;
    const names = [...new Set(limit.split(',').map((s) => s.trim()).filter(Boolean))];
    const unknown = names.filter((n) => !inventory.hasNode(n));
    if (names.length === 1 && unknown.length === 1) throw new SimRequestError(400, `limit '${limit}' is neither a group nor a node`);
    if (names.length === 0 || unknown.length > 0) throw new SimRequestError(400, `limit names unknown nodes: ${unknown.join(', ') || '(none given)'}`);
    return names;
  }

  private boot(session: Session, node: string, now: number): void {
    const { workloadManager, timeline, timing, violations } = this.deps;
    const other = this.bootingIn.get(node);
    if (other !== undefined) {
      violations.push(`${new Date(now).toISOString()} node ${node} put in boot session '${session.name}' while still booting in '${other}'`);
    }
    this.bootingIn.set(node, session.name);
    this.managedBy.set(node, session);
    this.bootCounts.set(node, this.bootCount(node) + 1);
    session.components.set(node, 'booting');
    this.deps.observer?.bootStarted(session.name, node);
    this.deps.changes?.byName(now, node, 'boot', session.name);
    const generation = workloadManager.reboot(node);
    const faults: Partial<SiteNode['faults']> = this.faults.get(node) ?? {};
    if (faults.boot === 'hang') return;

    timeline.at(now + timing.bootSeconds * 1000, (at) => {
      if (this.bootingIn.get(node) === session.name) this.bootingIn.delete(node);
      session.finished++;
      this.deps.observer?.bootEnded(session.name, node, faults.boot !== 'fail');
      if (session.finished === session.components.size) session.completedAt = at;
      if (faults.boot === 'fail') {
        session.components.set(node, 'failed');
        return;
      }
      session.components.set(node, 'succeeded');
      if (faults.returnToService !== 'never') {
        timeline.at(at + timing.returnSeconds * 1000, () => workloadManager.register(node, generation));
      }
    });
  }
}

function toRecord(session: Session): BootSessionRecord {
  return {
    name: session.name,
    operation: session.operation,
    templateName: session.templateName,
    limit: session.limit,
    createdAt: session.createdAt,
    ...(session.completedAt !== undefined ? { completedAt: session.completedAt } : {}),
    status: session.finished === session.components.size ? 'complete' : 'running',
    components: Object.fromEntries(session.components),
  };
}
