import { performance } from 'node:perf_hooks';
import { createSiteFromProfile } from '../adapters/site';
import { parseSiteProfile } from '../core/site/site-profile';
import { EmbeddedRuntime, type EmbeddedRuntimeOptions } from '../local/embedded-runtime';
import { SIMULATED_RELAY } from '../local/simulated-trigger-relay';
import { parseSiteDefinition, siteProfileFor } from '../simulator';
import { summarizeExecutions, transitionsByState, type BenchFigures } from './figures';
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
  /**
   * How the upgrade reaches the site: `default`, the embedded default (slurmrestd and BOS over HTTP); `ssm`, a Slurm
   * site over SSM (scontrol, slurm-reboot, the slurm inventory: `rollout simulate --transport ssm`'s profile).
   */
  site?: BenchSite;
  /**
   * The site's events on (issue 29): the session sets its Slurm triggers (strigger on the head node), parks its waits
   * for nodes until their firings, with the backstop poll at its default (10 x the poll). On the default site only
   * the quiesce waits are event-driven (BOS boots); over SSM with slurm-reboot the boot and return waits are too.
   */
  siteEvents?: boolean;
  /** With siteEvents: the backstop poll's interval (siteEvents.backstopSeconds); default 10 x the poll. */
  backstopSeconds?: number;
}

export type BenchSite = 'default' | 'ssm';

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
    slurm: {
      // slurm.conf's ResumeTimeout and SlurmdTimeout above the boot, as a site with a 600 s boot sets them (the
      // simulator's 600 s default would set a `scontrol reboot` of 600 s DOWN): 600 s unless the boot needs more.
      resumeTimeoutSeconds: slurmTimeoutFor(s),
      slurmdTimeoutSeconds: slurmTimeoutFor(s),
      // The embedded default's triggers (slurm.siteEvents); over SSM the profile's scontrol connector sets them instead.
      ...(s.siteEvents && (s.site ?? 'default') === 'default' ? { siteEvents: backstopOf(s) } : {}),
    },
  });
}

function backstopOf(s: RollingUpgradeScenario): { backstopSeconds?: number } {
  return s.backstopSeconds !== undefined ? { backstopSeconds: s.backstopSeconds } : {};
}

function slurmTimeoutFor(s: RollingUpgradeScenario): number {
  const { bootSeconds, returnSeconds } = s.timing ?? BENCH_TIMES;
  return Math.max(600, 1.5 * (bootSeconds + returnSeconds));
}

/**
 * The connectors of a Slurm site over SSM (scontrol, slurm-reboot, the slurm inventory, the command provisioner), as
 * `rollout simulate --transport ssm` writes its profile and createSiteFromProfile builds it, on the simulator's clock;
 * with `siteEvents`, its scontrol connector's siteEvents (the relay of a simulated site: the runtime delivers the firings).
 */
function ssmSlurmRebootConnectors(siteEvents: { backstopSeconds?: number } | undefined): NonNullable<EmbeddedRuntimeOptions['connectors']> {
  return async (simulator, { connectorState }) => {
    const profile = siteProfileFor(simulator.urls, 'ssm', 1);
    const { site, provisioner, taskCommands } = await createSiteFromProfile(
      parseSiteProfile(siteEvents ? { ...profile, workloadManager: { type: 'scontrol', siteEvents: { relay: SIMULATED_RELAY, ...siteEvents } } } : profile),
      { connectorState, clock: { now: () => simulator.simulator.clock.now() } },
    );
    return { ...site, ...(provisioner ? { provisioner } : {}), ...(taskCommands ? { taskCommands } : {}) };
  };
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
  const runtime = await EmbeddedRuntime.start({
    site: fleet(s),
    wrapFunction: roundTrips.wrapFunction,
    ...(s.site === 'ssm' ? { connectors: ssmSlurmRebootConnectors(s.siteEvents ? backstopOf(s) : undefined) } : {}),
  });
  roundTrips.watch(runtime.site);
  try {
    const startedAt = runtime.clock.now();
    const started = performance.now();
    const run = await runtime.run('rollingUpgrade', { ...fleetUpgradeRequest(s), ...s.controls });
    const outcome = await run.outcome;
    const wallSeconds = (performance.now() - started) / 1000;
    const makespanSeconds = (runtime.clock.now() - startedAt) / 1000;
    const session = await runtime.store.getSession(run.id);
    const nodes = await runtime.store.listNodes(run.id);
    return {
      scenario: s.name,
      outcome: `${outcome.status}, session ${session?.state}, ${nodes.filter((n) => n.status === 'UPGRADED').length} upgraded / ${nodes.filter((n) => n.status === 'FAILED').length} failed`,
      nodes: s.nodes,
      wallSeconds,
      makespanSeconds,
      dynamoDbRequests: runtime.dynamoDbRequests.total,
      dynamoDbRequestsByCommand: runtime.dynamoDbRequests.byCommand(),
      dynamoDbUnits: { write: runtime.dynamoDbRequests.writeUnits, read: runtime.dynamoDbRequests.readUnits },
      siteRoundTrips: roundTrips.total,
      transitionsByState: transitionsByState(runtime.engine),
      invocationsByFunction: Object.fromEntries(roundTrips.byFunction),
      ...summarizeExecutions(runtime.engine.executions),
    };
  } finally {
    await runtime.close();
  }
}
