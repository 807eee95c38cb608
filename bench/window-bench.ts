import { performance } from 'node:perf_hooks';
import { EmbeddedRuntime, itemsReadPerCall } from '../local/embedded-runtime';
import { makespanSeconds } from '../control-plane/reports/session-report';
import { formatDuration } from '../core/time-format';
import type { SiteDefinition } from '../simulator';
import { BUSY_FLEET, boundNodes, busyFleetSite, type BusyFleetSpec } from './busy-fleet';
import { makespanLowerBound } from './lower-bound';
import { fleet } from './rolling-upgrade-bench';
import { summarizeExecutions } from './figures';
import { peakOutOfService } from '../simulator/out-of-service';

export interface WindowBenchScenario {
  nodes: number;
  maxUnavailable: number;
  /** Window runs to compare with lock-step, each a label and the window's controls. */
  windows: { label: string; controls: Record<string, unknown> }[];
  /** Leave lock-step out (its figure is known): the ratios are then against the bound only. */
  skipLockstep?: boolean;
  /** Changes to the busy fleet (BUSY_FLEET): e.g. jobEndFraction {1, 1} for exact job ends, busyAtStart 0 for arriving jobs only. */
  fleet?: Partial<Omit<BusyFleetSpec, 'nodes'>>;
}

interface RunFigures {
  label: string;
  makespanSeconds: number;
  nodeHoursOutOfService: number;
  peakOutOfService: number;
  upgraded: number;
  failed: number;
  /** Nodes drained more than once (drain ahead lifted, then drained again with a slot), and the most drains of one node. */
  drainedTwice: number;
  mostDrains: number;
  /** Step Functions quotas: the most history events of one execution (25,000), the largest state payload (256 KiB). */
  maxHistoryEvents: number;
  largestPayloadBytes: number;
  executions: number;
  /** DynamoDB items read per AdvanceWindow increment, on average and at most. */
  itemsPerIncrement: { mean: number; max: number };
  wallSeconds: number;
}

/**
 * One run to its end, or (`stopAfterNodes`) stopped once that many nodes are done: a scale check of
 * a run that would take too long to finish (the quota figures are per execution, so they hold).
 */
async function runOnce(label: string, site: SiteDefinition, request: Record<string, unknown>, stopAfterNodes?: number): Promise<RunFigures> {
  const reads: number[] = [];
  const runtime = await EmbeddedRuntime.start({
    site,
    wrapFunction: itemsReadPerCall('AdvanceWindow', reads, () => runtime.dynamoDbRequests),
  });
  try {
    const started = performance.now();
    const run = await runtime.run('rollingUpgrade', {
      startingLabel: 'compute',
      upgradingLabel: 'upgrading',
      failedLabel: 'failed',
      upgradeTemplateId: site.bootTemplates[0],
      workloadManagerType: 'slurm',
      pollIntervalSeconds: 60,
      // The longest first job is 24 h: no node of the bench may time out waiting for it.
      quiesceTimeoutSeconds: 3 * 86400,
      ...request,
    });
    if (stopAfterNodes !== undefined) await stopWhenDone(runtime, run, stopAfterNodes);
    await run.outcome;
    const wallSeconds = (performance.now() - started) / 1000;
    const session = (await runtime.store.getSession(run.id))!;
    const records = await runtime.store.listNodes(run.id);
    const nodes = Object.values(runtime.simulator.state().nodes);
    const intervals = nodes.flatMap((n) => n.outOfService.map(([a, b]) => [a, b ?? a] as [number, number]));
    const executions = summarizeExecutions(runtime.engine.executions);
    return {
      label,
      makespanSeconds: makespanSeconds(session) ?? NaN,
      nodeHoursOutOfService: intervals.reduce((sum, [a, b]) => sum + (b - a), 0) / 3600,
      peakOutOfService: peakOutOfService(intervals),
      upgraded: records.filter((r) => r.status === 'UPGRADED').length,
      failed: records.filter((r) => r.status === 'FAILED').length,
      drainedTwice: nodes.filter((n) => n.drainCount > 1).length,
      mostDrains: Math.max(0, ...nodes.map((n) => n.drainCount)),
      maxHistoryEvents: executions.maxHistoryEvents,
      largestPayloadBytes: executions.largestPayloadBytes,
      executions: executions.executions,
      itemsPerIncrement: { mean: reads.length > 0 ? reads.reduce((a, b) => a + b, 0) / reads.length : 0, max: Math.max(0, ...reads) },
      wallSeconds,
    };
  } finally {
    await runtime.close();
  }
}

/** Stops the run's execution once `nodes` nodes are upgraded or failed (or lets it end by itself). */
async function stopWhenDone(runtime: EmbeddedRuntime, run: { id: string; outcome: Promise<unknown> }, nodes: number): Promise<void> {
  let ended = false;
  void run.outcome.finally(() => (ended = true));
  while (!ended) {
    const progress = await runtime.clock.busy(() => runtime.progress(run.id));
    if (progress?.kind === 'upgrade' && progress.upgraded + progress.failed >= nodes) {
      // The chain's current execution (it continues as new): stopping one that ended does nothing.
      const executions = runtime.engine.listExecutions(runtime.stateMachineArns.RollingUpgrade);
      await runtime.clock.busy(async () => Promise.all(executions.map((e) => runtime.engine.stop(e.executionArn))));
      return;
    }
    await runtime.clock.settled().catch(() => undefined);
  }
}

function renderRun(r: RunFigures, bound: number | undefined, lockstep: number): string {
  const ratio = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '-');
  return [
    `  ${r.label.padEnd(34)}  ${Number.isFinite(r.makespanSeconds) ? `${formatDuration(r.makespanSeconds).padEnd(14)} (${r.makespanSeconds} s)` : 'stopped, no makespan'}` +
      (bound !== undefined ? `  /bound ${ratio(r.makespanSeconds / bound)}  /lock-step ${ratio(r.makespanSeconds / lockstep)}` : ''),
    `      out of service ${r.nodeHoursOutOfService.toFixed(1)} node-h (peak ${r.peakOutOfService})  ${r.upgraded} upgraded / ${r.failed} failed` +
      `  drained twice ${r.drainedTwice} (most drains of a node: ${r.mostDrains})`,
    `      ${r.executions} executions, most history events ${r.maxHistoryEvents} (quota 25,000), largest payload ${r.largestPayloadBytes} bytes (quota 262,144)` +
      `  items read per increment ${r.itemsPerIncrement.mean.toFixed(1)} mean / ${r.itemsPerIncrement.max} max  [${r.wallSeconds.toFixed(0)} s wall]`,
  ].join('\n');
}

/**
 * Lock-step (stepSize = maxUnavailable) and the window side by side on one busy-fleet site, against
 * the lower bound. Each run is written as it ends (`write`), so a long bench shows what it has.
 */
export async function benchWindow(s: WindowBenchScenario, write: (text: string) => void): Promise<void> {
  const spec = { nodes: s.nodes, ...BUSY_FLEET, ...s.fleet };
  const site = () => busyFleetSite(spec);
  const bound = makespanLowerBound(boundNodes(site()), s.maxUnavailable);
  const ends =
    spec.jobEndFraction.min === 1 && spec.jobEndFraction.max === 1
      ? 'jobs end at their limit'
      : `jobs end at ${spec.jobEndFraction.min * 100}-${spec.jobEndFraction.max * 100}% of their limit, Slurm reports the limit`;
  write(
    `rolling upgrade, lock-step vs window: busy fleet of ${s.nodes} nodes (${(spec.busyAtStart ?? spec.utilisation) * 100}% busy at the start, ${spec.utilisation * 100}% utilisation; time limits lognormal median 2 h, max 24 h; ${ends}; boot 600 s, return 120 s), maxUnavailable ${s.maxUnavailable}\n` +
      `  lower bound                         ${formatDuration(bound).padEnd(14)} (${bound} s)\n`,
  );
  let lockstep = NaN;
  if (!s.skipLockstep) {
    const r = await runOnce(`lock-step, step size ${s.maxUnavailable}`, site(), { upgradeStepSize: s.maxUnavailable });
    lockstep = r.makespanSeconds;
    write(`${renderRun(r, bound, lockstep)}\n`);
  }
  for (const w of s.windows) {
    const r = await runOnce(w.label, site(), { upgradeStepSize: s.maxUnavailable, mode: 'window', maxUnavailable: s.maxUnavailable, ...w.controls });
    write(`${renderRun(r, bound, lockstep)}\n`);
  }
}

/**
 * The window at fleet scale: a spotless-but-for-faults fleet (every 97th boot fails, every 50th node
 * runs a 20 min job; boot 30 s, return 5 s) at each maxUnavailable, with the Step Functions quota figures.
 */
export async function benchWindowScale(
  nodes: number,
  maxUnavailables: readonly number[],
  write: (text: string) => void,
  stopAfterNodes?: number,
): Promise<void> {
  for (const maxUnavailable of maxUnavailables) {
    const site = fleet({ name: 'scale', nodes, stepSize: maxUnavailable, bootFailEvery: 97, busyEvery: 50 });
    const stop = stopAfterNodes !== undefined && stopAfterNodes < nodes ? stopAfterNodes : undefined;
    const label = `window, ${nodes} nodes, maxUnavailable ${maxUnavailable}${stop !== undefined ? `, stopped after ${stop} done` : ''}`;
    const r = await runOnce(label, site, { upgradeStepSize: maxUnavailable, mode: 'window', maxUnavailable, pollIntervalSeconds: 10 }, stop);
    write(`${renderRun(r, undefined, NaN)}\n`);
  }
}
