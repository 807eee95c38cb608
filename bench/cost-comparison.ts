import { costPerThousandNodes } from './cost';
import type { BenchFigures } from './figures';
import { benchRollingUpgrade, type BenchSite, type SiteTiming } from './rolling-upgrade-bench';

/** A rolling upgrade's mode the cost bench prices, with issue 29's goal for it (dollars per 1,000 node-upgrades). */
export interface CostMode {
  label: string;
  stepSize: number;
  controls?: Record<string, unknown>;
  goal: number;
}

/** Issue 29, item 6: lock-step step 1 / 10 / 100 at most $0.20 / $0.03 / $0.02, window cap 1 / 32 at most $0.15 / $0.02. */
export const COST_MODES: readonly CostMode[] = [
  { label: 'lock-step, step 1', stepSize: 1, goal: 0.2 },
  { label: 'lock-step, step 10', stepSize: 10, goal: 0.03 },
  { label: 'lock-step, step 100', stepSize: 100, goal: 0.02 },
  { label: 'window, `maxUnavailable` 1', stepSize: 1, controls: { mode: 'window', maxUnavailable: 1 }, goal: 0.15 },
  { label: 'window, `maxUnavailable` 32', stepSize: 1, controls: { mode: 'window', maxUnavailable: 32 }, goal: 0.02 },
];

/** The sites the bench compares on: the same connectors before (every wait a poll) and after (the site's events). */
export const COST_SITES: readonly { site: BenchSite; label: string }[] = [
  { site: 'ssm', label: 'Slurm over SSM (scontrol, slurm-reboot, slurm inventory)' },
  { site: 'default', label: 'embedded default (slurmrestd, BOS: only the quiesce waits are events)' },
];

/** One mode run twice on the same site and times: every wait a poll, then with the site's events. */
export interface CostPair {
  mode: CostMode;
  before: BenchFigures;
  after: BenchFigures;
}

/** Whether a cost meets its goal, and its ratio to the goal (under 1: met). */
export function goalVerdict(total: number, goal: number): { met: boolean; ratio: number } {
  return { met: total <= goal, ratio: total / goal };
}

/** The figures per node a row of the comparison shows, and the cost per 1,000 node-upgrades. */
export function costRow(f: BenchFigures) {
  if (f.siteRoundTrips === undefined) throw new Error(`${f.scenario}: the comparison needs the site round trips counted`);
  const cost = costPerThousandNodes(f);
  return {
    transitions: f.stateTransitions / f.nodes,
    writes: cost.writes / f.nodes,
    invocations: f.lambdaInvocations / f.nodes,
    roundTrips: f.siteRoundTrips / f.nodes,
    cost,
    makespanSeconds: f.makespanSeconds,
  };
}

/** `h:mm:ss` of a simulated duration. */
export function formatMakespan(seconds: number | undefined): string {
  if (seconds === undefined) return '-';
  const s = Math.round(seconds);
  return `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

/**
 * One Markdown table of before → after per mode (per node: transitions, write units, Lambda invocations, site round
 * trips; dollars per 1,000 node-upgrades; the makespan) with each mode's goal met or missed by the after figure.
 */
export function renderCostComparison(title: string, pairs: readonly CostPair[]): string {
  const n2 = (x: number) => x.toFixed(2);
  const usd = (x: number) => `$${x.toFixed(4)}`;
  const rows = pairs.map(({ mode, before, after }) => {
    const [b, a] = [costRow(before), costRow(after)];
    const verdict = goalVerdict(a.cost.total, mode.goal);
    const cells = [
      `${n2(b.transitions)} → ${n2(a.transitions)}`,
      `${n2(b.writes)} → ${n2(a.writes)}`,
      `${n2(b.invocations)} → ${n2(a.invocations)}`,
      `${n2(b.roundTrips)} → ${n2(a.roundTrips)}`,
      `${usd(b.cost.total)} → **${usd(a.cost.total)}**`,
      `${formatMakespan(b.makespanSeconds)} → ${formatMakespan(a.makespanSeconds)}`,
      `$${mode.goal.toFixed(2)}: ${verdict.met ? 'met' : 'missed'}, ${verdict.ratio.toFixed(2)} x`,
    ];
    return `| ${mode.label} | ${cells.join(' | ')} |`;
  });
  return [
    title,
    '',
    '| mode | transitions / node | writes / node | invocations / node | site round trips / node | $ per 1,000 node-upgrades | makespan | goal (after) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/**
 * Where each after figure's dollars go: Step Functions, Lambda, DynamoDB, and the states and functions that take the
 * most (per node), so that what is left to cut reads off the table.
 */
export function renderCostBreakdown(pairs: readonly CostPair[]): string {
  const usd = (x: number) => `$${x.toFixed(4)}`;
  const top = (counts: Record<string, number> | undefined, nodes: number, k: number) =>
    Object.entries(counts ?? {})
      .sort((x, y) => y[1] - x[1])
      .slice(0, k)
      .map(([name, count]) => `${name} ${(count / nodes).toFixed(2)}`)
      .join(', ');
  return pairs
    .map(({ mode, after }) => {
      const { cost } = costRow(after);
      const invocations = Object.fromEntries(Object.entries(after.invocationsByFunction ?? {}).map(([name, c]) => [name, c.invocations]));
      const roundTrips = Object.fromEntries(Object.entries(after.invocationsByFunction ?? {}).map(([name, c]) => [name, c.roundTrips]));
      return [
        `  ${mode.label}: Step Functions ${usd(cost.stepFunctions)}, Lambda ${usd(cost.lambda)}, DynamoDB ${usd(cost.dynamoDb)} (${(cost.reads / after.nodes).toFixed(2)} reads / node)`,
        `    transitions / node: ${top(after.transitionsByState, after.nodes, 6)}`,
        `    invocations / node: ${top(invocations, after.nodes, 5)}; site round trips / node: ${top(roundTrips, after.nodes, 4)}`,
      ].join('\n');
    })
    .join('\n');
}

/**
 * `--only=cost`: each mode on each site, once with every wait a poll and once with the site's events (triggers armed,
 * waits parked, the backstop at 10 x the poll or `backstopSeconds`), at `timing`; a site's table is written as soon as its runs end.
 */
export async function benchCostComparison(
  options: { nodes: number; timing: SiteTiming; timesLabel: string; sites?: readonly BenchSite[]; backstopSeconds?: number },
  write: (text: string) => void,
): Promise<void> {
  for (const { site, label } of COST_SITES.filter((s) => !options.sites || options.sites.includes(s.site))) {
    const pairs: CostPair[] = [];
    for (const mode of COST_MODES) {
      const run = (siteEvents: boolean) =>
        benchRollingUpgrade({
          name: `${label}, ${options.nodes} nodes, ${mode.label}, ${siteEvents ? 'site events' : 'polls'}`,
          nodes: options.nodes,
          stepSize: mode.stepSize,
          ...(mode.controls ? { controls: mode.controls } : {}),
          timing: options.timing,
          site,
          siteEvents,
          ...(siteEvents && options.backstopSeconds !== undefined ? { backstopSeconds: options.backstopSeconds } : {}),
        });
      const before = await run(false);
      const after = await run(true);
      // Figures of a run that did not upgrade every node price something else: refused, not printed.
      for (const f of [before, after]) if (!/^SUCCEEDED.* 0 failed$/.test(f.outcome)) throw new Error(`${f.scenario}: ${f.outcome}`);
      pairs.push({ mode, before, after });
    }
    const backstop = options.backstopSeconds !== undefined ? `${options.backstopSeconds} s` : '10 x the poll';
    const title = `${label}, ${options.nodes} nodes, ${options.timesLabel}: before (every wait a poll) → after (site events, backstop ${backstop})`;
    write(`${renderCostComparison(title, pairs)}\n\n`);
    write(`Where the after cost goes:\n${renderCostBreakdown(pairs)}\n\n`);
  }
}
