import { performance } from 'node:perf_hooks';
import { EmbeddedRuntime } from '../local/embedded-runtime';
import { parseSiteDefinition } from '../simulator';
import { summarizeExecutions, type BenchFigures } from './figures';
import { SiteRoundTrips } from './site-round-trips';

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
  /** The site's times and the poll interval; default: a 30 s boot, 5 s return to service, 10 s poll (the bench's times). */
  timing?: SiteTiming;
}

export interface SiteTiming {
  bootSeconds: number;
  returnSeconds: number;
  pollSeconds: number;
}

export const BENCH_TIMES: SiteTiming = { bootSeconds: 30, returnSeconds: 5, pollSeconds: 10 };
/** A real site's times (issue 29): a 600 s boot, 120 s back in service, a 30 s poll. */
export const SITE_TIMES: SiteTiming = { bootSeconds: 600, returnSeconds: 120, pollSeconds: 30 };

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
    timing: { bootSeconds: (s.timing ?? BENCH_TIMES).bootSeconds, returnSeconds: (s.timing ?? BENCH_TIMES).returnSeconds },
  });
}

/** The upgrade of the fleet's compute group to cos-2.4, `stepSize` nodes a step, polled every 10 s (or the scenario's poll). */
export function fleetUpgradeRequest(s: Pick<RollingUpgradeScenario, 'stepSize' | 'timing'>) {
  return {
    startingLabel: 'compute',
    upgradingLabel: 'upgrading',
    failedLabel: 'failed',
    upgradeStepSize: s.stepSize,
    upgradeTemplateId: 'cos-2.4',
    workloadManagerType: 'slurm',
    pollIntervalSeconds: (s.timing ?? BENCH_TIMES).pollSeconds,
  };
}

export async function benchRollingUpgrade(s: RollingUpgradeScenario): Promise<BenchFigures> {
  const roundTrips = new SiteRoundTrips();
  // Virtual time: makespans do not depend on the host.
  const runtime = await EmbeddedRuntime.start({ site: fleet(s), wrapFunction: roundTrips.wrapFunction });
  roundTrips.watch(runtime.site);
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
      dynamoDbUnits: { write: runtime.dynamoDbRequests.writeUnits, read: runtime.dynamoDbRequests.readUnits },
      siteRoundTrips: roundTrips.total,
      ...summarizeExecutions(runtime.engine.executions),
    };
  } finally {
    await runtime.close();
  }
}
