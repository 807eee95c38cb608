import { performance } from 'node:perf_hooks';
import { EmbeddedRuntime } from '../engine/embedded-runtime';
import { makespanSeconds } from '../engine/reports/session-report';
import { formatDuration } from '../cli/summary';
import { BUSY_FLEET, boundNodes, busyFleetSite } from './busy-fleet';
import { makespanLowerBound } from './lower-bound';

export interface WindowBenchScenario {
  nodes: number;
  maxUnavailable: number;
  /** Window runs to compare with lock-step, each a label and the window's controls. */
  windows: { label: string; controls: Record<string, unknown> }[];
  /** Leave lock-step out (its figure is known): the ratios are then against the bound only. */
  skipLockstep?: boolean;
}

interface RunFigures {
  label: string;
  makespanSeconds: number;
  nodeHoursOutOfService: number;
  peakOutOfService: number;
  upgraded: number;
  failed: number;
  wallSeconds: number;
}

/** Most nodes out of service at one instant. */
function peak(intervals: [number, number][]): number {
  const events = intervals.flatMap(([a, b]) => [[a, 1], [b, -1]] as [number, number][]).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let now = 0;
  let most = 0;
  for (const [, d] of events) most = Math.max(most, (now += d));
  return most;
}

async function runOnce(label: string, nodes: number, request: Record<string, unknown>): Promise<RunFigures> {
  const runtime = await EmbeddedRuntime.start({ site: busyFleetSite({ nodes, ...BUSY_FLEET }) });
  try {
    const started = performance.now();
    const run = await runtime.run('rollingUpgrade', {
      startingLabel: 'compute',
      upgradingLabel: 'upgrading',
      failedLabel: 'failed',
      upgradeTemplateId: 'cos-2.4',
      workloadManagerType: 'slurm',
      pollIntervalSeconds: 60,
      // The longest first job is 24 h: no node of the bench may time out waiting for it.
      quiesceTimeoutSeconds: 3 * 86400,
      ...request,
    });
    await run.outcome;
    const session = (await runtime.store.getSession(run.id))!;
    const records = await runtime.store.listNodes(run.id);
    const site = runtime.simulator.state();
    const intervals = Object.values(site.nodes).flatMap((n) => n.outOfService.map(([a, b]) => [a, b ?? a] as [number, number]));
    return {
      label,
      makespanSeconds: makespanSeconds(session) ?? NaN,
      nodeHoursOutOfService: intervals.reduce((sum, [a, b]) => sum + (b - a), 0) / 3600,
      peakOutOfService: peak(intervals),
      upgraded: records.filter((r) => r.status === 'UPGRADED').length,
      failed: records.filter((r) => r.status === 'FAILED').length,
      wallSeconds: (performance.now() - started) / 1000,
    };
  } finally {
    await runtime.close();
  }
}

/** Lock-step (stepSize = maxUnavailable) and the window side by side on one busy-fleet site, against the lower bound. */
export async function benchWindow(s: WindowBenchScenario): Promise<string> {
  const bound = makespanLowerBound(boundNodes(busyFleetSite({ nodes: s.nodes, ...BUSY_FLEET })), s.maxUnavailable);
  const runs = s.skipLockstep ? [] : [await runOnce(`lock-step, step size ${s.maxUnavailable}`, s.nodes, { upgradeStepSize: s.maxUnavailable })];
  for (const w of s.windows) {
    runs.push(await runOnce(w.label, s.nodes, { upgradeStepSize: s.maxUnavailable, mode: 'window', maxUnavailable: s.maxUnavailable, ...w.controls }));
  }
  const lockstep = s.skipLockstep ? NaN : runs[0]!.makespanSeconds;
  const lines = [
    `rolling upgrade, lock-step vs window: busy fleet of ${s.nodes} nodes (60% busy, jobs lognormal median 2 h, max 24 h; boot 600 s, return 120 s), maxUnavailable ${s.maxUnavailable}`,
    `  lower bound                         ${formatDuration(bound).padEnd(14)} (${bound} s)`,
  ];
  for (const r of runs) {
    lines.push(
      `  ${r.label.padEnd(34)}  ${formatDuration(r.makespanSeconds).padEnd(14)} (${r.makespanSeconds} s)  /bound ${(r.makespanSeconds / bound).toFixed(3)}` +
        `  /lock-step ${(r.makespanSeconds / lockstep).toFixed(3)}  out of service ${r.nodeHoursOutOfService.toFixed(1)} node-h (peak ${r.peakOutOfService})` +
        `  ${r.upgraded} upgraded / ${r.failed} failed  [${r.wallSeconds.toFixed(0)} s wall]`,
    );
  }
  return lines.join('\n');
}
