import { performance } from 'node:perf_hooks';
import { EmbeddedRuntime } from '../local/embedded-runtime';
import { parseSiteDefinition } from '../simulator';
import { summarizeExecutions, type BenchFigures } from './figures';

export interface RollingUpgradeScenario {
  name: string;
  nodes: number;
  stepSize: number;
  /** Every n-th node fails to boot, every m-th never returns, every k-th runs a job: the site is not spotless. */
  bootFailEvery?: number;
  neverReturnsEvery?: number;
  busyEvery?: number;
  /** Request controls on top (e.g. `{ mode: 'window', maxUnavailable: 32 }`): stepSize is then lock-step's only. */
  controls?: Record<string, unknown>;
}

/** A fleet of `nodes` compute nodes, 64 per rack, with a sprinkling of faults. */
export function fleet(s: RollingUpgradeScenario) {
  const nodes = Array.from({ length: s.nodes }, (_, i) => {
    const name = `x${3000 + Math.floor(i / 64)}c0s${Math.floor((i % 64) / 2)}b0n${i % 2}`;
    return {
      name,
      nid: i + 1,
      rack: `x${3000 + Math.floor(i / 64)}`,
      ...(s.busyEvery && i % s.busyEvery === 5 ? { wlm: { state: 'ALLOCATED' as const, busySeconds: 1200 } } : {}),
      ...(s.bootFailEvery && i % s.bootFailEvery === 7 ? { faults: { boot: 'fail' as const } } : {}),
      ...(s.neverReturnsEvery && i % s.neverReturnsEvery === 11 ? { faults: { returnToService: 'never' as const } } : {}),
    };
  });
  return parseSiteDefinition({
    nodes,
    groups: { compute: nodes.map((n) => n.name), upgrading: [], failed: [] },
    bootTemplates: ['cos-2.4'],
    timing: { bootSeconds: 30, returnSeconds: 5 },
  });
}

/** The upgrade of the fleet's compute group to cos-2.4, `stepSize` nodes a step, polled every 10 s. */
export function fleetUpgradeRequest(s: Pick<RollingUpgradeScenario, 'stepSize'>) {
  return {
    startingLabel: 'compute',
    upgradingLabel: 'upgrading',
    failedLabel: 'failed',
    upgradeStepSize: s.stepSize,
    upgradeTemplateId: 'cos-2.4',
    workloadManagerType: 'slurm',
    pollIntervalSeconds: 10,
  };
}

export async function benchRollingUpgrade(s: RollingUpgradeScenario): Promise<BenchFigures> {
  const runtime = await EmbeddedRuntime.start({ site: fleet(s) }); // virtual time: makespans do not depend on the host
  try {
    const started = performance.now();
    const run = await runtime.run('rollingUpgrade', { ...fleetUpgradeRequest(s), ...s.controls });
    const outcome = await run.outcome;
    const wallSeconds = (performance.now() - started) / 1000;
    const session = await runtime.store.getSession(run.id);
    const nodes = await runtime.store.listNodes(run.id);
    return {
      scenario: s.name,
      outcome: `${outcome.status}, session ${session?.state}, ${nodes.filter((n) => n.status === 'UPGRADED').length} upgraded / ${nodes.filter((n) => n.status === 'FAILED').length} failed`,
      nodes: s.nodes,
      wallSeconds,
      dynamoDbRequests: runtime.dynamoDbRequests.total,
      dynamoDbRequestsByCommand: runtime.dynamoDbRequests.byCommand(),
      ...summarizeExecutions(runtime.engine.executions),
    };
  } finally {
    await runtime.close();
  }
}
