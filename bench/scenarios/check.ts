import { checkInvariants, type Violation } from './invariants';
import { factsOf, knownItem } from './known-violations';
import { runScenario, type RunOptions, type ScenarioRun } from './run-scenario';
import { describeScenario, generateScenario } from './scenario';

export interface CheckedScenario {
  seed: number;
  description: string;
  run: ScenarioRun;
  /** Violations of no known bug: each is a finding. */
  violations: Violation[];
  /** Violations of bugs already filed, by issue 26 item. */
  known: (Violation & { item: number | string })[];
}

/** The one-line command that replays a seed. */
export const replayCommand = (seed: number) => `npm run scenarios -- --seed ${seed} --count 1 --verbose`;

/** Draws the scenario of `seed`, runs it on the simulator and checks every invariant. */
export async function checkScenario(seed: number, options: RunOptions = {}): Promise<CheckedScenario> {
  const scenario = generateScenario(seed);
  const run = await runScenario(scenario, options);
  const violations: Violation[] = [];
  const known: CheckedScenario['known'] = [];
  for (const violation of checkInvariants(run)) {
    const item = knownItem(factsOf(scenario), violation);
    if (item === undefined) violations.push(violation);
    else known.push({ ...violation, item });
  }
  return { seed, description: describeScenario(scenario), run, violations, known };
}

/** A failed scenario as a report prints it: the seed, what it was, what broke, how to replay it. */
export function renderFailure(checked: CheckedScenario): string {
  const { run } = checked;
  return [
    `scenario ${checked.seed} broke ${checked.violations.length} invariant(s): ${checked.description}`,
    `  outcome: ${run.outcomes.map((o) => o.status).join(' → ')}, session ${run.report?.state ?? 'none'}, exit ${run.exitStatus}, ${run.simulatedSeconds} simulated s`,
    ...run.operator
      .filter((o) => o.takenAt !== undefined)
      .map((o) => `  operator ${o.action.kind} at +${o.takenAt}s (session ${o.stateBefore ?? '?'}): ${o.answer ?? ''}`.slice(0, 240)),
    ...checked.violations.map((v) => `  ✗ ${v.invariant}${v.node ? ` ${v.node}` : ''}: ${v.text}`),
    `  replay: ${replayCommand(checked.seed)}`,
  ].join('\n');
}

/**
 * Checks the scenarios of `seeds`, `jobs` at a time (each has its own runtime, site and virtual
 * clock: they share nothing but the event loop, and a scenario over SSM mostly waits for its
 * commands), handing each result to `done` as it ends. Results come back in seed order.
 */
export async function checkScenarios(
  seeds: readonly number[],
  jobs: number,
  done?: (checked: CheckedScenario) => void,
  options: RunOptions = {},
): Promise<CheckedScenario[]> {
  const results: CheckedScenario[] = new Array(seeds.length);
  let next = 0;
  const worker = async () => {
    while (next < seeds.length) {
      const i = next++;
      results[i] = await checkScenario(seeds[i]!, options);
      done?.(results[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, seeds.length)) }, worker));
  return results;
}
