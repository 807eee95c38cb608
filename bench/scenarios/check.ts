import { checkInvariants, type Violation } from './invariants';
import { factsOf, knownItem, TASK_GRAPH_KNOWN } from './known-violations';
import { runScenario, type RunOptions, type ScenarioRun } from './run-scenario';
import { describeScenario, generateScenario } from './scenario';
import { checkTaskGraphInvariants } from './task-graph-invariants';
import { describeTaskGraphScenario, generateTaskGraphScenario, runTaskGraphScenario, type TaskGraphRun } from './task-graph-scenario';
import { randomStream } from '../../simulator/seeded-random';
import { checkDeploymentInvariants } from './deployment-invariants';
import { describeDeploymentScenario, generateDeploymentScenario, runDeploymentScenario, type DeploymentScenarioRun } from './deployment-scenario';

/** The workflows a seed draws: rolling upgrades, and about 15% each task-graph runs and group deployments (small ones). */
export type ScenarioKind = 'rolling-upgrade' | 'task-graph' | 'group-deployment';

export function scenarioKind(seed: number): ScenarioKind {
  const draw = randomStream(seed, 'workflow')();
  return draw < 0.15 ? 'task-graph' : draw < 0.3 ? 'group-deployment' : 'rolling-upgrade';
}

/** The seed draws a rolling upgrade that arms the site's triggers (issue 29: waits resumed by their firings). */
export function armsSiteTriggers(seed: number): boolean {
  return scenarioKind(seed) === 'rolling-upgrade' && generateScenario(seed).siteEvents !== undefined;
}

export interface CheckedScenario {
  seed: number;
  kind: ScenarioKind;
  description: string;
  run: ScenarioRun | TaskGraphRun | DeploymentScenarioRun;
  /** The run's final state as its record says it (session state, task run status). */
  finalState: string;
  /** Violations of no known bug: each is a finding. */
  violations: Violation[];
  /** Violations of bugs already filed, by issue 26 item. */
  known: (Violation & { item: number | string })[];
}

/** Violations of no known bug, and those of a known one by its item. */
function partition(found: Violation[], itemOf: (v: Violation) => number | string | undefined): Pick<CheckedScenario, 'violations' | 'known'> {
  const violations: Violation[] = [];
  const known: CheckedScenario['known'] = [];
  for (const violation of found) {
    const item = itemOf(violation);
    if (item === undefined) violations.push(violation);
    else known.push({ ...violation, item });
  }
  return { violations, known };
}

/** The one-line command that replays a seed. */
export const replayCommand = (seed: number) => `npm run scenarios -- --seed ${seed} --count 1 --verbose`;

/** Draws the scenario of `seed`, runs it on the simulator and checks every invariant. */
export async function checkScenario(seed: number, options: RunOptions = {}): Promise<CheckedScenario> {
  if (scenarioKind(seed) === 'group-deployment') {
    const scenario = generateDeploymentScenario(seed);
    const run = await runDeploymentScenario(scenario);
    return {
      seed,
      kind: 'group-deployment',
      description: describeDeploymentScenario(scenario),
      run,
      finalState: run.status ?? 'none',
      ...partition(checkDeploymentInvariants(run), () => undefined),
    };
  }
  if (scenarioKind(seed) === 'task-graph') {
    const scenario = generateTaskGraphScenario(seed);
    const run = await runTaskGraphScenario(scenario);
    return {
      seed,
      kind: 'task-graph',
      description: describeTaskGraphScenario(scenario),
      run,
      finalState: run.status ?? 'none',
      ...partition(checkTaskGraphInvariants(run), (v) => TASK_GRAPH_KNOWN.find((k) => k.matches(v))?.item),
    };
  }
  const scenario = generateScenario(seed);
  const run = await runScenario(scenario, options);
  const { violations, known } = partition(checkInvariants(run), (v) => knownItem(factsOf(scenario), v));
  return { seed, kind: 'rolling-upgrade', description: describeScenario(scenario), run, finalState: run.report?.state ?? 'none', violations, known };
}

/** A failed scenario as a report prints it: the seed, what it was, what broke, how to replay it. */
export function renderFailure(checked: CheckedScenario): string {
  const { run } = checked;
  return [
    `scenario ${checked.seed} broke ${checked.violations.length} invariant(s): ${checked.description}`,
    `  outcome: ${run.outcomes.map((o) => o.status).join(' → ')}, final ${checked.finalState}, exit ${run.exitStatus}, ${run.simulatedSeconds} simulated s`,
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
