import type { NodeChangeLog } from './node-changes';
import type { SiteNode, SiteTiming } from '../site-file';
import { SimRequestError } from '../errors';
import type { Timeline } from '../timeline';

export const PROVISION_ACTIONS = ['prepare', 'deploy'] as const;
export type ProvisionActionKind = (typeof PROVISION_ACTIONS)[number];
export type ProvisionOutcome = 'pending' | 'running' | 'succeeded' | 'failed';

export interface ProvisionActionRecord {
  name: string;
  action: ProvisionActionKind;
  status: 'running' | 'complete';
  nodes: Record<string, ProvisionOutcome>;
}

/** One node's part in one action, in simulated epoch ms; `finishedAt` is absent while it runs (or hangs). */
export interface ProvisionNodeRun {
  action: string;
  kind: ProvisionActionKind;
  node: string;
  startedAt: number;
  finishedAt?: number;
}

interface Action {
  name: string;
  action: ProvisionActionKind;
  nodes: Map<string, ProvisionOutcome>;
  finished: number;
}

export interface ProvisionerDeps {
  timing: Pick<SiteTiming, 'prepareSeconds' | 'deploySeconds'>;
  nodes: readonly Pick<SiteNode, 'name' | 'faults'>[];
  timeline: Timeline;
  /** Site-wide list this model appends to when two actions work on one node at once. */
  violations: string[];
  /** Where every prepare and deploy is logged with the run its action's name names. */
  changes?: NodeChangeLog;
}

/** A Shipyard/Drydock-like provisioner: prepare and deploy actions over a list of nodes. */
export class ProvisionerModel {
  private readonly actions = new Map<string, Action>();
  /** Node → the action still working on it. */
  private readonly runningIn = new Map<string, string>();
  private readonly counts = new Map<string, Record<ProvisionActionKind, number>>();
  private readonly faults: Map<string, SiteNode['faults']>;
  private readonly runs: ProvisionNodeRun[] = [];

  constructor(private readonly deps: ProvisionerDeps) {
    this.faults = new Map(deps.nodes.map((n) => [n.name, n.faults]));
  }

  count(node: string, action: ProvisionActionKind): number {
    return this.counts.get(node)?.[action] ?? 0;
  }

  /** Every node run so far, in start order (read-only copies): who was in flight when. */
  nodeRuns(): ProvisionNodeRun[] {
    this.deps.timeline.sync();
    return this.runs.map((run) => ({ ...run }));
  }

  getAction(name: string): ProvisionActionRecord | undefined {
    this.deps.timeline.sync();
    const action = this.actions.get(name);
    return action && toRecord(action);
  }

  startAction(request: { name: string; action: ProvisionActionKind; nodes: readonly string[] }): ProvisionActionRecord {
    const now = this.deps.timeline.sync();
    if (this.actions.has(request.name)) throw new SimRequestError(409, `action '${request.name}' already exists`);
    const unknown = request.nodes.filter((n) => !this.faults.has(n));
    if (unknown.length > 0) throw new SimRequestError(400, `unknown nodes: ${unknown.join(', ')}`);
    const action: Action = { name: request.name, action: request.action, nodes: new Map(), finished: 0 };
    this.actions.set(action.name, action);
    for (const node of new Set(request.nodes)) this.run(action, node, now);
    return toRecord(action);
  }

  private run(action: Action, node: string, now: number): void {
    const { timeline, timing, violations } = this.deps;
    const other = this.runningIn.get(node);
    if (other !== undefined) {
      violations.push(`${new Date(now).toISOString()} node ${node} put in provisioner action '${action.name}' while still in '${other}'`);
    }
    this.runningIn.set(node, action.name);
    const counts = this.counts.get(node) ?? { prepare: 0, deploy: 0 };
    counts[action.action]++;
    this.counts.set(node, counts);
    action.nodes.set(node, 'running');
    const record: ProvisionNodeRun = { action: action.name, kind: action.action, node, startedAt: now };
    this.runs.push(record);
    this.deps.changes?.byName(now, node, action.action, action.name);
    const fault = this.faults.get(node)?.[action.action];
    if (fault === 'hang') return;

    const seconds = action.action === 'prepare' ? timing.prepareSeconds : timing.deploySeconds;
    timeline.at(now + seconds * 1000, (at) => {
      record.finishedAt = at;
      if (this.runningIn.get(node) === action.name) this.runningIn.delete(node);
      action.finished++;
      action.nodes.set(node, fault === 'fail' ? 'failed' : 'succeeded');
    });
  }
}

function toRecord(action: Action): ProvisionActionRecord {
  return {
    name: action.name,
    action: action.action,
    status: action.finished === action.nodes.size ? 'complete' : 'running',
    nodes: Object.fromEntries(action.nodes),
  };
}
