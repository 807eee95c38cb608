import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { buildDeploymentReport } from '../../control-plane/reports/deployment-report';
import type { EnvironmentStore } from '../../ports/environment-store';
import { isFailureReason } from '../../core/site/node-claims';
import type { SiteState } from '../../simulator';
import type { NodeChange } from '../../simulator/models/node-changes';
import { deploymentNodeRuns } from './deployment-sites';

/**
 * The fault matrix's one invariant checker: whatever went wrong, no node is lost (each has a
 * terminal recorded status), no node is changed more often than the finished runs over it account
 * for (drained or booted twice; prepared or deployed twice), each node's last recorded status is what
 * the site shows, the site saw no safety breach, no node was worked on by two runs at once (the
 * site's own log of who changed it, by the run its Slurm reason, boot session or action names: one
 * run's changes of a node never interleave with another's), and no node lock is left behind.
 */
export interface NodeObservation {
  name: string;
  /** The last recorded status (UPGRADED, FAILED, DEPLOYED, ...), undefined when none was recorded. */
  recorded: string | undefined;
  terminal: boolean;
  /** Changes the site counted (drains, boots; prepares, deploys). */
  changes: Record<string, number>;
  /** Finished runs whose plan holds the node: each may change it once. */
  allowed: number;
  /** Per change, when runs of different kinds allow different changes (an upgrade drains, a deployment prepares): overrides `allowed`. */
  allowedBy?: Record<string, number>;
  /** What the site shows for it, for the message. */
  siteShows: string;
  agrees: boolean;
}

export function invariantViolations(nodes: readonly NodeObservation[], site: SiteState, lockOwners: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const node of nodes) {
    if (!node.terminal) found.push(`${node.name}: lost (recorded ${node.recorded ?? 'nothing'})`);
    for (const [change, count] of Object.entries(node.changes)) {
      const allowed = node.allowedBy?.[change] ?? node.allowed;
      if (count > allowed) found.push(`${node.name}: ${change} ${count} times (at most ${allowed})`);
    }
    if (!node.agrees) found.push(`${node.name}: recorded ${node.recorded ?? 'nothing'} but the site shows ${node.siteShows}`);
  }
  for (const violation of site.violations) found.push(`site: ${violation}`);
  found.push(...interleavedRuns(site.changes ?? []));
  for (const [name, owner] of lockOwners) found.push(`${name}: still locked by ${owner}`);
  return found;
}

/**
 * Nodes two runs worked on at once: per node, the runs the site's changes name, in order; a run that
 * changes the node again after another run did is a breach (`a, b, a`). Runs are compared by their
 * first 8 hex (a task run's reboot session names no more of it).
 */
export function interleavedRuns(changes: readonly NodeChange[]): string[] {
  const found: string[] = [];
  const byNode = new Map<string, { runs: string[]; trail: string[] }>();
  for (const change of changes) {
    if (change.by === undefined) continue;
    const run = change.by.slice(0, 8);
    const seen = byNode.get(change.node) ?? { runs: [], trail: [] };
    byNode.set(change.node, seen);
    seen.trail.push(`${change.change} by ${run}`);
    if (seen.runs.at(-1) === run) continue;
    if (seen.runs.includes(run)) found.push(`${change.node}: worked on by run ${run} again after run ${seen.runs.at(-1)} (${seen.trail.join(', ')})`);
    seen.runs.push(run);
  }
  return found;
}

const OUT_OF_SERVICE = /DRAIN|FAIL|DOWN/;

/** Rolling upgrades: `finished` are the sessions that ran to their end, oldest first (the last one's record of a node is its last status). */
export async function observeUpgrades(runtime: EmbeddedRuntime, finished: readonly string[]): Promise<string[]> {
  const site = runtime.simulator.state();
  const last = new Map<string, { status: string; reason?: string; upgradingLabel: string; failedLabel: string }>();
  const allowed = new Map<string, number>();
  for (const upgradeId of finished) {
    const session = await runtime.store.getSession(upgradeId);
    if (!session) throw new Error(`no session ${upgradeId}`);
    for (const node of await runtime.store.listNodes(upgradeId)) {
      allowed.set(node.name, (allowed.get(node.name) ?? 0) + 1);
      last.set(node.name, {
        status: node.status,
        ...(node.reason ? { reason: node.reason } : {}),
        upgradingLabel: session.upgradingLabel,
        failedLabel: session.failedLabel,
      });
    }
  }
  const nodes = [...last].map(([name, record]): NodeObservation => {
    const state = site.nodes[name]!;
    const inGroups = Object.keys(site.groups).filter((label) => site.groups[label]!.includes(name));
    const upgradedAgrees =
      state.bootCount >= 1 && !OUT_OF_SERVICE.test(state.wlmState) && !inGroups.includes(record.failedLabel) && !inGroups.includes(record.upgradingLabel);
    const failedAgrees = inGroups.includes(record.failedLabel) && OUT_OF_SERVICE.test(state.wlmState) && isFailureReason(state.wlmReason, record.reason ?? '');
    return {
      name,
      recorded: record.reason ? `${record.status} (${record.reason})` : record.status,
      terminal: record.status === 'UPGRADED' || record.status === 'FAILED',
      changes: { drained: state.drainCount, booted: state.bootCount },
      allowed: allowed.get(name)!,
      siteShows: `${state.wlmState}${state.wlmReason ? ` (${state.wlmReason})` : ''}, booted ${state.bootCount}, in [${inGroups.join(', ')}]`,
      agrees: record.status === 'UPGRADED' ? upgradedAgrees : record.status === 'FAILED' && failedAgrees,
    };
  });
  return invariantViolations(nodes, site, await runtime.store.locks.getLockOwners([...last.keys()]));
}

/** A group deployment: each node's stage in the report against the provisioner's runs of it. */
export async function observeDeployment(runtime: EmbeddedRuntime, deploymentId: string): Promise<string[]> {
  const site = runtime.simulator.state();
  const record = await runtime.deployments.getDeployment(deploymentId);
  if (!record) throw new Error(`no deployment ${deploymentId}`);
  const report = await buildDeploymentReport(runtime.deployments, record);
  const runs = deploymentNodeRuns(runtime, deploymentId);
  const nodes = Object.entries(report.nodes).map(([name, stage]): NodeObservation => {
    const state = site.nodes[name]!;
    const deployed = runs.some((run) => run.node === name && run.phase === 'deploy' && run.finishedAt !== undefined);
    return {
      name,
      recorded: stage,
      terminal: stage === 'DEPLOYED' || stage === 'FAILED',
      changes: { prepared: state.prepareCount, deployed: state.deployCount },
      allowed: 1,
      siteShows: `prepared ${state.prepareCount}, deployed ${state.deployCount}${deployed ? ' (finished)' : ''}`,
      agrees: stage === 'DEPLOYED' ? deployed && state.prepareCount === 1 : stage === 'FAILED',
    };
  });
  return invariantViolations(nodes, site, new Map());
}

/**
 * Environments (Fuel's): each site node in at most one environment, each node id in one, each name on
 * one, as a reader of the store sees them.
 */
export async function observeEnvironments(store: EnvironmentStore): Promise<string[]> {
  const holders = { 'site node': new Map<string, number[]>(), 'node id': new Map<string, number[]>(), name: new Map<string, number[]>() };
  const add = (map: Map<string, number[]>, key: string, id: number) => map.set(key, [...(map.get(key) ?? []), id]);
  for (const environment of await store.listEnvironments()) {
    add(holders.name, environment.name, environment.id);
    for (const node of environment.nodes) {
      add(holders['site node'], node.name, environment.id);
      add(holders['node id'], String(node.id), environment.id);
    }
  }
  return Object.entries(holders).flatMap(([what, map]) =>
    [...map].filter(([, ids]) => ids.length > 1).map(([key, ids]) => `${what} ${key}: in environments ${ids.join(', ')}`),
  );
}
/** The runs of several workflows over one site, each to its end. */
export interface MixedRuns {
  upgrades?: readonly string[];
  deployments?: readonly string[];
  taskRuns?: readonly string[];
}

/**
 * Runs of different workflows over the same nodes: each node's record in every run is terminal
 * (upgraded or failed; deployed or failed; every task ended), each run changed it at most once in
 * its own way (an upgrade or a task run drains and boots it, a deployment prepares and deploys it),
 * a node no run failed is back in service, no two runs worked on it at once (the site's own log),
 * and no run holds a lock any more.
 */
export async function observeMixedRuns(runtime: EmbeddedRuntime, runs: MixedRuns): Promise<string[]> {
  const site = runtime.simulator.state();
  const records = new Map<string, { recorded: string[]; terminal: boolean; failed: boolean; drains: number; boots: number; provisions: number }>();
  const of = (name: string) => {
    const found = records.get(name) ?? { recorded: [], terminal: true, failed: false, drains: 0, boots: 0, provisions: 0 };
    records.set(name, found);
    return found;
  };
  for (const id of runs.upgrades ?? []) {
    for (const node of await runtime.store.listNodes(id)) {
      const seen = of(node.name);
      seen.recorded.push(`upgrade ${node.status}`);
      seen.terminal &&= node.status === 'UPGRADED' || node.status === 'FAILED';
      seen.failed ||= node.status === 'FAILED';
      seen.drains++;
      seen.boots++;
    }
  }
  for (const id of runs.deployments ?? []) {
    const record = await runtime.deployments.getDeployment(id);
    if (!record) throw new Error(`no deployment ${id}`);
    for (const [name, stage] of Object.entries((await buildDeploymentReport(runtime.deployments, record)).nodes)) {
      const seen = of(name);
      seen.recorded.push(`deployment ${stage}`);
      seen.terminal &&= stage === 'DEPLOYED' || stage === 'FAILED';
      seen.failed ||= stage === 'FAILED';
      seen.provisions++;
    }
  }
  for (const id of runs.taskRuns ?? []) {
    const view = await runtime.taskRun(id);
    if (!view) throw new Error(`no task run ${id}`);
    for (const [name, tasks] of Object.entries(view.nodes)) {
      const seen = of(name);
      const states = Object.values(tasks);
      seen.recorded.push(`tasks ${states.join('/')}`);
      seen.terminal &&= states.every((state) => state === 'ACTIVE' || state === 'ERROR' || (state === 'BLOCKED' && view.blocked[name] !== undefined));
      seen.failed ||= states.some((state) => state !== 'ACTIVE');
      seen.drains++;
      seen.boots++;
    }
  }
  const nodes = [...records].map(([name, seen]): NodeObservation => {
    const state = site.nodes[name]!;
    return {
      name,
      recorded: seen.recorded.join(', '),
      terminal: seen.terminal,
      changes: { drained: state.drainCount, booted: state.bootCount, prepared: state.prepareCount, deployed: state.deployCount },
      allowed: 0,
      allowedBy: { drained: seen.drains, booted: seen.boots, prepared: seen.provisions, deployed: seen.provisions },
      siteShows: `${state.wlmState}${state.wlmReason ? ` (${state.wlmReason})` : ''}, booted ${state.bootCount}`,
      agrees: seen.failed || !OUT_OF_SERVICE.test(state.wlmState),
    };
  });
  return invariantViolations(nodes, site, await runtime.store.locks.getLockOwners([...records.keys()]));
}
