import { parseArgs } from 'node:util';
import { armsSiteTriggers, checkScenarios, renderFailure, scenarioKind, type CheckedScenario, type ScenarioKind } from './check';
import { KNOWN_VIOLATIONS, TASK_GRAPH_KNOWN } from './known-violations';

/**
 * `npm run scenarios -- --count N --seed S`: draws N scenarios from seeds S, S+1, ... (S is drawn
 * and printed when not given), runs each on the simulator on virtual time, checks the invariants,
 * and prints every failure with its seed and the command that replays it, then the tally and the
 * pace (scenarios per minute). `--verbose` prints each scenario as it ends; `--jobs N` runs N at once
 * (default 4: each has its own runtime and virtual clock, and those over SSM mostly wait). `--kind K`
 * (`rolling-upgrade`, `task-graph`, `group-deployment`) runs only the first N seeds from S that draw
 * that workflow; `--site-events`, only the rolling upgrades that arm the site's triggers (issue 29). Exit 1 when an invariant broke outside the known bugs (bench/scenarios/known-violations.ts).
 */
const KINDS: readonly ScenarioKind[] = ['rolling-upgrade', 'task-graph', 'group-deployment'];
const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100' },
    seed: { type: 'string' },
    verbose: { type: 'boolean', default: false },
    jobs: { type: 'string', default: '4' },
    slurm: { type: 'string' },
    kind: { type: 'string' },
    'site-events': { type: 'boolean', default: false },
  },
});
if (values.slurm !== undefined) {
  const { runRealSlurmScenarios, scenarioRelease } = await import('./real-slurm-main');
  process.exitCode = await runRealSlurmScenarios(
    scenarioRelease(values.slurm),
    Number(values.count),
    values.seed === undefined ? undefined : Number(values.seed),
  );
} else {
  const count = Number(values.count);
  const jobs = Number(values.jobs);
  const first = values.seed === undefined ? Math.floor(Math.random() * 1_000_000) : Number(values.seed);
  if (!Number.isInteger(count) || count < 1 || !Number.isInteger(first)) {
    console.error('--count must be a whole number above 0, --seed a whole number');
    process.exit(2);
  }
  const kind = values.kind as ScenarioKind | undefined;
  if (kind !== undefined && !KINDS.includes(kind)) {
    console.error(`--kind must be one of ${KINDS.join(', ')}`);
    process.exit(2);
  }
  const siteEvents = values['site-events'];
  console.log(
    `scenarios: ${count}${kind ? ` ${kind}` : ''}${siteEvents ? ' with site triggers armed' : ''} from seed ${first} on the simulator (virtual time)`,
  );
  const started = Date.now();
  let failed = 0;
  const known = new Map<number | string, number>();
  const byInvariant = new Map<string, number>();
  let ended = 0;
  const byKind = new Map<string, number>();
  const report = (checked: CheckedScenario) => {
    ended++;
    byKind.set(checked.kind, (byKind.get(checked.kind) ?? 0) + 1);
    if (!values.verbose) process.stderr.write(`\r${ended}/${count} scenario(s) checked`);
    for (const v of checked.known) known.set(v.item, (known.get(v.item) ?? 0) + 1);
    for (const v of checked.violations) byInvariant.set(v.invariant, (byInvariant.get(v.invariant) ?? 0) + 1);
    if (checked.violations.length > 0) {
      failed++;
      console.log(`\n${renderFailure(checked)}`);
    } else if (values.verbose) {
      const r = checked.run;
      console.log(`ok ${checked.seed} (${r.realMs} ms, ${r.simulatedSeconds} simulated s, ${checked.finalState}): ${checked.description}`);
      for (const v of checked.known) console.log(`  known (item ${v.item}) ${v.invariant}${v.node ? ` ${v.node}` : ''}: ${v.text}`);
    }
  };
  // A scenario that throws (the runner's own fault, or the product's before any session) is a failure with its replay.
  const seeds: number[] = [];
  for (let seed = first; seeds.length < count; seed++)
    if ((kind === undefined || scenarioKind(seed) === kind) && (!siteEvents || armsSiteTriggers(seed))) seeds.push(seed);
  await checkScenarios(seeds, jobs, report).catch((err: unknown) => {
    failed++;
    console.log(`\na scenario could not run: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  });
  const minutes = (Date.now() - started) / 60_000;
  console.log(
    `\n${count} scenario(s), ${count - failed} kept every invariant, ${failed} did not; ${(count / minutes).toFixed(0)} scenarios/min (${(minutes * 60).toFixed(1)} s)`,
  );
  console.log(`by workflow: ${[...byKind].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  if (byInvariant.size > 0) console.log(`broken: ${[...byInvariant].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  if (known.size > 0)
    console.log(
      `known bugs hit: ${[...known].map(([item, n]) => `item ${item} (${[...KNOWN_VIOLATIONS, ...TASK_GRAPH_KNOWN].find((k) => k.item === item)?.what}) ${n}`).join('; ')}`,
    );
  process.exitCode = failed > 0 ? 1 : 0;
}
