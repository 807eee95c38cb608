import { templateName, type SiteBootSet, type SiteBootTemplate, type SiteNode, type SiteTiming } from '../site-file';
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
  /** Why BOS's session setup failed the session (no node left to act upon), as BOS's status.error. */
  error?: string;
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
  error?: string;
}

export interface BootServiceDeps {
  templates: readonly SiteBootTemplate[];
  /** Slurm's name of a site node (a CSM site's nid name): the reboot reaches Slurm by it. */
  slurmName?: (node: string) => string;
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
  /** Template name → its boot sets; undefined for a template given by name alone (its limit names the nodes). */
  private readonly templates: Map<string, Record<string, SiteBootSet> | undefined>;
  private readonly faults: Map<string, SiteNode['faults']>;

  constructor(private readonly deps: BootServiceDeps) {
    this.templates = new Map(deps.templates.map((t) => [templateName(t), typeof t === 'string' ? undefined : t.bootSets]));
    this.faults = new Map(deps.nodes.map((n) => [n.name, n.faults]));
  }

  templateExists(name: string): boolean {
    return this.templates.has(name);
  }

  templateNames(): string[] {
    return [...this.templates.keys()];
  }

  /** A template's boot sets as BOS serves them (`{}` for a template given by name alone). */
  bootSets(name: string): Record<string, SiteBootSet> {
    return this.templates.get(name) ?? {};
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
    const bootSets = this.templates.get(request.templateName);
    const nodes = bootSets ? this.sessionSetup(bootSets, request.limit) : this.resolveLimit(request.limit);
    const session: Session = { ...request, createdAt: now, components: new Map(), finished: 0 };
    this.sessions.set(session.name, session);
    if (nodes.length === 0) {
      // BOS's session setup: SessionSetupException, the session marked complete with the error.
      session.error = 'No nodes were found to act upon.';
      session.completedAt = now;
    }
    for (const node of nodes) this.boot(session, node, now);
    return toRecord(session);
  }

  /**
   * The nodes a session of a template with boot sets acts upon, as BOS's session setup operator
   * finds them (Cray-HPE/bos src/bos/operators/session_setup.py, _get_boot_set_component_list):
   * per boot set, node_list, then the members of node_groups, then the nodes of node_roles_groups
   * (HSM Role, or Role_SubRole: src/bos/common/clients/hsm/inventory.py); then the session's limit
   * applied (_apply_limit: comma-separated groups, roles or ids, `&` intersects, `!` removes, `all`
   * / `*` for every node); the arch filter (the simulated nodes are X86); and the nodes disabled in
   * HSM dropped (_apply_include_disabled; sessions here never include disabled nodes).
   */
  private sessionSetup(bootSets: Record<string, SiteBootSet>, limit: string): string[] {
    const { inventory } = this.deps;
    const roles = new Map<string, Set<string>>();
    for (const node of inventory.listNodes()) {
      const add = (key: string) => roles.set(key, (roles.get(key) ?? new Set()).add(node.name));
      add(node.role);
      if (node.labels.subrole) add(`${node.role}_${node.labels.subrole}`);
    }
    const inventoryKey = (key: string): Set<string> | undefined => (inventory.hasGroup(key) ? new Set(inventory.getGroup(key).members) : roles.get(key));
    const enabled = new Map(inventory.listNodes().map((n) => [n.name, n.available !== false]));
    const chosen = new Set<string>();
    for (const bootSet of Object.values(bootSets)) {
      let nodes = new Set(bootSet.node_list ?? []);
      for (const label of bootSet.node_groups ?? []) for (const n of inventory.hasGroup(label) ? inventory.getGroup(label).members : []) nodes.add(n);
      for (const role of bootSet.node_roles_groups ?? []) for (const n of roles.get(role) ?? []) nodes.add(n);
      if (nodes.size === 0) continue;
      let limited = new Set<string>();
      for (const part of limit.split(',')) {
        const op = part[0] === '&' ? 'and' : part[0] === '!' ? 'not' : 'or';
        const key = op === 'or' ? part : part.slice(1);
        const these = key === 'all' || key === '*' ? nodes : (inventoryKey(key) ?? new Set([key]));
        limited =
          op === 'or'
            ? new Set([...limited, ...these])
            : op === 'and'
              ? new Set([...limited].filter((n) => these.has(n)))
              : new Set([...limited].filter((n) => !these.has(n)));
      }
      nodes = new Set([...nodes].filter((n) => limited.has(n)));
      if ((bootSet.arch ?? 'X86') !== 'X86' && bootSet.arch !== 'Unknown') nodes.clear();
      for (const n of nodes) if (enabled.get(n) === true) chosen.add(n);
    }
    return [...chosen];
  }

  /** BOS limits name a group, or list nodes separated by commas. */
  private resolveLimit(limit: string): string[] {
    const { inventory } = this.deps;
    if (inventory.hasGroup(limit)) return inventory.getGroup(limit).members;
    const names = [
      ...new Set(
        limit
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ),
    ];
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
    const slurmName = this.deps.slurmName?.(node) ?? node;
    this.deps.changes?.byName(now, slurmName, 'boot', session.name);
    const generation = workloadManager.reboot(slurmName);
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
        timeline.at(at + timing.returnSeconds * 1000, () => workloadManager.register(slurmName, generation));
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
    ...(session.error !== undefined ? { error: session.error } : {}),
    components: Object.fromEntries(session.components),
  };
}
