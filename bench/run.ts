import { BENCH_TIMES, benchRollingUpgrade, SITE_TIMES, type RollingUpgradeScenario } from './rolling-upgrade-bench';
import { renderFigures } from './figures';
import { benchGroupDeployment, type GroupDeploymentScenario } from './group-deployment-bench';
import { benchSsmRollingUpgrade } from './ssm-bench';
import { benchRealSlurm } from './real-slurm-bench';
import { benchRealSlurmEvents } from './real-slurm-events-bench';
import { realSlurmReleases } from '../scripts/slurm/real-slurm';
import { benchWindow, benchWindowScale, type WindowBenchScenario } from './window-bench';
import { benchTaskGraph } from './task-graph-bench';
import { measureBundles, renderBundleFigures } from './bundle-figures';
import { benchCostComparison } from './cost-comparison';
import { renderSessionItem, sessionItemFigures } from './session-item';
import { runSideBySide, worktreeOf } from './side-by-side';
import { renderSoak, soakServe } from './soak';
import { benchLiveView, LIVE_VIEW_FLEETS } from './live-view-bench';
import { benchEtaReads, renderEtaReads } from './eta-reads-bench';

/**
 * `npm run bench`: fleet-scale runs on the embedded default, printing figures (not asserting them).
 * `npm run bench -- --quick` runs smaller fleets, to check the harness; `--only=upgrade|deploy|window|window-scale|tasks|ssm|live-view|eta-reads|bundles|cost` runs one kind
 * (`ssm`: the step-size-100 upgrade through scontrol over SSM, with SSM calls and output bytes per node, `--ssm-nodes=N` for
 * another fleet size; `bundles`: the Lambda
 * bundles of the last `npm run synth`, sizes and import time; `cost`: dollars per 1,000 node-upgrades at step size 1, 10
 * and 100 and in mode window at maxUnavailable 1 and 32, before and after the site's events, `--site-times` at a real
 * site's times; `session-item`: the
 * rolling-upgrade session item's size and write units; none of these in the default run).
 */
const quick = process.argv.includes('--quick');
const nodes = quick ? 200 : 2000;

const scenarios: RollingUpgradeScenario[] = [
  {
    name: `rolling upgrade, ${nodes} nodes, step size 1 (the history-quota worst case)`,
    nodes,
    stepSize: 1,
    bootFailEvery: 97,
    neverReturnsEvery: 251,
    busyEvery: 50,
  },
  { name: `rolling upgrade, ${nodes} nodes, step size 100`, nodes, stepSize: 100, bootFailEvery: 97, neverReturnsEvery: 251, busyEvery: 50 },
];

const deployment: GroupDeploymentScenario = quick
  ? { name: 'group deployment, 1,000 nodes in 10 groups', groups: 10, nodesPerGroup: 100, maxParallelGroups: 4 }
  : { name: 'group deployment, 10,000 nodes in 100 groups', groups: 100, nodesPerGroup: 100, maxParallelGroups: 4 };

/**
 * Lock-step against the window on the issue's busy fleet, at the same maxUnavailable.
 * `--window-nodes=N --max-unavailable=M` pick another fleet; `--idle-first-only` runs the window,
 * idle-first with drainAhead, alone (no lock-step, no plan order: for fleets where those take hours).
 */
const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const maxUnavailable = Number(flag('max-unavailable') ?? (quick ? 8 : 32));
const idleFirstOnly = process.argv.includes('--idle-first-only');
// `--reserve-slots`: the idle-first window holds each node's planned slot with a maintenance reservation (issue 21 goal 8).
const reserveSlots = process.argv.includes('--reserve-slots');
const idleFirst = {
  label: `window, idle-first, drainAhead ${maxUnavailable}${reserveSlots ? ', reserveSlots' : ''}`,
  controls: { order: 'idle-first', drainAhead: maxUnavailable, ...(reserveSlots ? { reserveSlots: true } : {}) },
};
// `--job-ends=exact`: every job runs to its time limit, so the reported end is the true one (the model before issue 21);
// the default, `limit`: jobs end at 20-100% of their limit and Slurm reports the limit. `--arriving`: no job at the start,
// jobs arrive at 60% utilisation (issue 21 goal 8).
const exactEnds = flag('job-ends') === 'exact';
const window: WindowBenchScenario = {
  nodes: Number(flag('window-nodes') ?? (quick ? 64 : 512)),
  maxUnavailable,
  windows: idleFirstOnly ? [idleFirst] : [{ label: 'window, plan order', controls: {} }, idleFirst],
  skipLockstep: idleFirstOnly,
  fleet: { ...(exactEnds ? { jobEndFraction: { min: 1, max: 1 } } : {}), ...(process.argv.includes('--arriving') ? { busyAtStart: 0 } : {}) },
};

// `--before=REF`: this same bench on REF's code, then on this tree, one after the other (bench/side-by-side.ts).
const beforeRef = flag('before');
if (beforeRef !== undefined && process.argv.includes('--only=soak')) {
  // The soak drives a `rollout serve` process: this bench's driver against REF's service, then against this tree's.
  const soak = { requests: Number(flag('soak-requests') ?? 100_000), increments: Number(flag('soak-increments') ?? 1000) };
  for (const [label, root] of [
    [`before (${beforeRef})`, worktreeOf(beforeRef)],
    ['after (this tree)', process.cwd()],
  ] as const) {
    process.stdout.write(`==== ${label}\n${renderSoak(await soakServe({ ...soak, root }))}\n\n`);
  }
  process.exit(0);
}
if (beforeRef !== undefined) {
  runSideBySide(
    beforeRef,
    process.argv.slice(2).filter((a) => !a.startsWith('--before=')),
    (text) => process.stdout.write(text),
  );
  process.exit(0);
}

const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
if (only === 'bundles') {
  // Not in the default run: needs a `npm run synth` first. `--cdk-out=DIR` measures another synth's output.
  const cdkOut = process.argv.find((a) => a.startsWith('--cdk-out='))?.slice('--cdk-out='.length) ?? 'cdk.out';
  process.stdout.write(`${renderBundleFigures(cdkOut, measureBundles(cdkOut))}\n\n`);
}
if (only === 'cost') {
  // A spotless fleet (no faults, no jobs): what a plain upgrade costs in each mode, before (every wait a poll) and after
  // (the site's events), on a Slurm site over SSM and on the embedded default (bench/cost-comparison.ts). `--site-times`:
  // a real site's times (600 s boot, 120 s return, 30 s poll) instead of the bench's (30 s, 5 s, 10 s); `--cost-site=ssm|default`: one site;
  // `--backstop=S`: the after runs' backstop poll (siteEvents.backstopSeconds) instead of 10 x the poll.
  const siteTimes = process.argv.includes('--site-times');
  const costSite = flag('cost-site');
  await benchCostComparison(
    {
      nodes: quick ? 64 : 200,
      timing: siteTimes ? SITE_TIMES : BENCH_TIMES,
      timesLabel: siteTimes ? "a site's times (600 s boot, 120 s return, 30 s poll)" : "the bench's times (30 s boot, 5 s return, 10 s poll)",
      ...(costSite === 'ssm' || costSite === 'default' ? { sites: [costSite] } : {}),
      ...(flag('backstop') !== undefined ? { backstopSeconds: Number(flag('backstop')) } : {}),
    },
    (text) => process.stdout.write(text),
  );
}
if (only === 'session-item') {
  // The rolling-upgrade session item's size and write units at 64 and 10,000 nodes, lock-step (step 100) and window (maxUnavailable 32).
  for (const nodes of [64, 10_000]) {
    for (const [mode, controls] of [
      ['lock-step, step 100', { upgradeStepSize: 100 }],
      ['window, maxUnavailable 32', { mode: 'window', maxUnavailable: 32 }],
    ] as const) {
      process.stdout.write(`${renderSessionItem(await sessionItemFigures(`${nodes} nodes, ${mode}`, nodes, controls, 60))}\n`);
    }
  }
}
if (only === 'real-slurm') {
  // On a real Slurm of this host (root, Debian's packages): slurmctld RPCs per node-upgrade, and our window beside Slurm's own reboot ASAP.
  process.stdout.write(
    `${await benchRealSlurm({ ...(flag('seed') ? { seed: Number(flag('seed')) } : {}), ...(flag('poll') ? { pollSeconds: Number(flag('poll')) } : {}) })}\n\n`,
  );
}

if (only === 'real-slurm-events') {
  // Issue 29 on a real Slurm, per release (REAL_SLURM_RELEASES picks some): polled against woken by Slurm's triggers, and Slurm's own batches.
  process.stdout.write(
    `${await benchRealSlurmEvents({
      releases: realSlurmReleases(),
      ...(flag('poll') ? { pollSeconds: Number(flag('poll')) } : {}),
      ...(flag('backstop') ? { backstopSeconds: Number(flag('backstop')) } : {}),
      ...(flag('reboot') ? { rebootDelaySeconds: Number(flag('reboot')) } : {}),
    })}\n\n`,
  );
}

if (only === 'soak') {
  // `rollout serve` under 100,000 mixed requests and a 1,000-increment workflow (`--soak-requests=N --soak-increments=N`).
  const figures = await soakServe({
    requests: Number(flag('soak-requests') ?? (quick ? 10_000 : 100_000)),
    increments: Number(flag('soak-increments') ?? (quick ? 200 : 1000)),
  });
  process.stdout.write(`${renderSoak(figures)}\n\n`);
}
if (only === 'ssm') {
  // `--ssm-nodes=N`: another fleet size (the step-100 scenario's busy, failing fleet).
  const ssmNodes = Number(flag('ssm-nodes') ?? nodes);
  process.stdout.write(`${await benchSsmRollingUpgrade({ ...scenarios[1]!, name: `rolling upgrade, ${ssmNodes} nodes, step size 100`, nodes: ssmNodes })}\n\n`);
}
if (only === undefined || only === 'upgrade') {
  for (const scenario of scenarios) process.stdout.write(`${renderFigures(await benchRollingUpgrade(scenario))}\n\n`);
}
const write = (text: string) => process.stdout.write(text);
if (only === undefined || only === 'window') {
  await benchWindow(window, write);
  write('\n');
}
// Not in the default run: the window on 10,000 nodes (`--scale-nodes=N`, `--scale-max-unavailable=1,500`), with the quota
// figures; `--scale-stop-after=N` stops each run once N nodes are done (10,000 at maxUnavailable 1 takes about 40 min of wall time).
if (only === 'window-scale') {
  const sizes = (flag('scale-max-unavailable') ?? '1,500').split(',').map(Number);
  const stopAfter = flag('scale-stop-after');
  await benchWindowScale(Number(flag('scale-nodes') ?? (quick ? 1000 : 10000)), sizes, write, stopAfter !== undefined ? Number(stopAfter) : undefined);
  write('\n');
}
// The live view's reads per redraw at 64 and 10,000 nodes, before (the whole report) and after (the nodes in flight).
if (only === undefined || only === 'live-view') {
  await benchLiveView(LIVE_VIEW_FLEETS, write);
  write('\n');
}
// Not in the default run: the site reads of a whole window run, the ETA's re-plans among them (`--eta-nodes=N`, 10,000; `--eta-max-unavailable=M`, 100).
if (only === 'eta-reads') {
  const etaNodes = Number(flag('eta-nodes') ?? (quick ? 1000 : 10_000));
  write(`${renderEtaReads(await benchEtaReads(etaNodes, Number(flag('eta-max-unavailable') ?? (quick ? 10 : 100))))}\n\n`);
}
if (only === undefined || only === 'deploy') process.stdout.write(`${renderFigures(await benchGroupDeployment(deployment))}\n\n`);
if (only === undefined || only === 'tasks') {
  const taskNodes = quick ? 1000 : 10_000;
  const figures = await benchTaskGraph({
    name: `task graph, ${taskNodes} nodes, compute in chunks of ${quick ? 100 : 1000}`,
    nodes: taskNodes,
    amount: quick ? 100 : 1000,
  });
  process.stdout.write(
    `${renderFigures(figures)}\n  task runs logged by the site       ${figures.taskRuns}\n  node-state chunks                ${figures.chunks}\n  makespan (simulated)             ${figures.makespanSeconds} s\n\n`,
  );
}
