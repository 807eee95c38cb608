import { checkScenarios, renderFailure } from '../../bench/scenarios/check';

/** Scenarios run at once in one file (each its own runtime and virtual clock): those over SSM mostly wait for their commands. */
const JOBS = Number(process.env.SCENARIO_JOBS ?? 4);
/** Seeds per test: a few tests per file keep each one's time readable. */
const BLOCK = 50;

/**
 * Seeded scenarios on the simulator (issue 26, "Scenarios and invariants"): about 70% draw a rolling
 * upgrade (lock-step or window with its controls), 15% a group deployment and 15% a task-graph run
 * (bench/scenarios/check.ts scenarioKind); an upgrade draws its connectors, its site (busy nodes, admin drains,
 * boot failures, nodes that never return, failing site calls, jobs that keep arriving) and an
 * operator's stop, resume, cancel, kill or admin drain at a random moment, runs it on the embedded
 * engine on virtual time, and checks every invariant against the site's own record
 * (bench/scenarios/invariants.ts). A failure prints its seed and the command that replays it.
 * Violations of bugs already filed are counted by item (bench/scenarios/known-violations.ts).
 */
export function describeScenarioBlocks(first: number, count: number): void {
  describeScenarioSeeds(
    `${count} seeded scenarios from seed ${first}`,
    Array.from({ length: count }, (_, i) => first + i),
  );
}

/** The scenarios of `seeds` (in blocks of BLOCK, each a test), each checked against the site's record. */
export function describeScenarioSeeds(title: string, seeds: readonly number[]): void {
  describe(`${title}, checked against the site's record`, () => {
    const known = new Map<number | string, number>();
    afterAll(() => {
      if (known.size > 0) console.log(`${title}: known bugs hit: ${[...known].map(([item, n]) => `item ${item}: ${n}`).join(', ')}`);
    });
    for (let from = 0; from < seeds.length; from += BLOCK) {
      const block = seeds.slice(from, from + BLOCK);
      it(`seeds ${block[0]}-${block.at(-1)} keep every invariant`, async () => {
        const checked = await checkScenarios(block, JOBS);
        for (const v of checked.flatMap((c) => c.known)) known.set(v.item, (known.get(v.item) ?? 0) + 1);
        expect(checked.filter((c) => c.violations.length > 0).map(renderFailure)).toEqual([]);
      }, 600_000);
    }
  });
}
