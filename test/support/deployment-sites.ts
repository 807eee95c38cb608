import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import type { ExecutionOutcome } from '../../local/local-step-functions';
import { causeMessage } from '../../control-plane/execution-cause';
import type { DeploymentRecord } from '../../ports/deployment-store';
import { buildDeploymentReport, type DeploymentReport } from '../../control-plane/reports/deployment-report';
import { parseSiteDefinition, type SiteDefinition, type SiteDefinitionInput, type SiteState } from '../../simulator';
import type { ProvisionNodeRun } from '../../simulator/models/provisioner';

type SiteNodeInput = SiteDefinitionInput['nodes'][number];
export type DeploymentNodeInput = Omit<SiteNodeInput, 'nid'>;
type Faults = NonNullable<SiteNodeInput['faults']>;

/** Short simulated timings for group deployments. */
export const QUICK_TIMING = { prepareSeconds: 30, deploySeconds: 60 } as const;

/** The request settings of the tests: a short poll interval (10 simulated seconds). */
export const QUICK_POLL = { pollIntervalSeconds: 10 } as const;

/** A site of the given nodes (nids in order) with short provisioner timings. */
export function deploymentSite(nodes: readonly DeploymentNodeInput[], timing: SiteDefinitionInput['timing'] = QUICK_TIMING): SiteDefinition {
  return parseSiteDefinition({ nodes: nodes.map((node, i) => ({ nid: i + 1, ...node })), timing });
}

/** `prefix00`, `prefix01`, ... with optional faults by index. */
export function namedNodes(prefix: string, count: number, faults: (i: number) => Faults | undefined = () => undefined): DeploymentNodeInput[] {
  return Array.from({ length: count }, (_, i) => {
    const fault = faults(i);
    return { name: `${prefix}${String(i).padStart(2, '0')}`, ...(fault ? { faults: fault } : {}) };
  });
}

export const namesOf = (nodes: readonly { name: string }[]) => nodes.map((node) => node.name);

/** A strategy group (Shipyard's keys) selecting exactly `nodes` by name. */
export function groupOf(name: string, nodes: readonly string[], options: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, critical: false, depends_on: [], selectors: [{ node_names: [...nodes] }], ...options };
}

export interface FinishedDeployment {
  deploymentId: string;
  outcome: ExecutionOutcome;
  /** The error message inside the Fail state's cause (the Lambda error JSON read back). */
  message: string;
  record: DeploymentRecord | undefined;
  report: DeploymentReport | undefined;
  site: SiteState;
  /** The provisioner's node runs of this deployment, each with its group, phase and batch. */
  runs: DeploymentNodeRun[];
}

export interface DeploymentNodeRun extends ProvisionNodeRun {
  group: string;
  phase: 'prepare' | 'deploy';
  batch: number;
}

/** Starts a group deployment and waits for its end; reads back the record, the report and the site. */
export async function runDeployment(runtime: EmbeddedRuntime, input: unknown): Promise<FinishedDeployment> {
  const run = await runtime.run('groupDeployment', input);
  const outcome = await run.outcome;
  const record = await runtime.deployments.getDeployment(run.id);
  return {
    deploymentId: run.id,
    outcome,
    message: causeMessage(outcome),
    record,
    report: record && (await buildDeploymentReport(runtime.deployments, record)),
    site: runtime.simulator.state(),
    runs: deploymentNodeRuns(runtime, run.id),
  };
}

/** Node runs of one deployment: its actions are named `deploy-<deploymentId>-<group>-<phase>-<batch>`. */
export function deploymentNodeRuns(runtime: EmbeddedRuntime, deploymentId: string): DeploymentNodeRun[] {
  const prefix = `deploy-${deploymentId}-`;
  return runtime.simulator.simulator.provisioner.nodeRuns().flatMap((run) => {
    if (!run.action.startsWith(prefix)) return [];
    const parts = /^(.*)-(prepare|deploy)-(\d+)$/.exec(run.action.slice(prefix.length));
    if (!parts) throw new Error(`unexpected action name ${run.action}`);
    return [{ ...run, group: parts[1]!, phase: parts[2] as 'prepare' | 'deploy', batch: Number(parts[3]) }];
  });
}

/**
 * The most node runs in flight at one instant. A run occupies [startedAt, finishedAt); a run that
 * never finished (a hang) is in flight until `openUntil`.
 */
export function maxInFlight(runs: readonly ProvisionNodeRun[], openUntil = Number.POSITIVE_INFINITY): number {
  const edges = runs.flatMap((run) => [
    { at: run.startedAt, delta: 1 },
    { at: run.finishedAt ?? openUntil, delta: -1 },
  ]);
  // Ends before starts at the same instant: a run that starts as another finishes does not overlap it.
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let current = 0;
  let most = 0;
  for (const edge of edges) {
    current += edge.delta;
    most = Math.max(most, current);
  }
  return most;
}

/** [first start, last finish] of some runs (all finished). */
export function spanOf(runs: readonly ProvisionNodeRun[]): { from: number; to: number } {
  if (runs.length === 0) throw new Error('no runs');
  return {
    from: Math.min(...runs.map((run) => run.startedAt)),
    to: Math.max(...runs.map((run) => run.finishedAt ?? Number.POSITIVE_INFINITY)),
  };
}

/** Nodes with any prepare or deploy action on them. */
export function touchedNodes(site: SiteState): string[] {
  return Object.entries(site.nodes)
    .filter(([, node]) => node.prepareCount > 0 || node.deployCount > 0)
    .map(([name]) => name);
}
