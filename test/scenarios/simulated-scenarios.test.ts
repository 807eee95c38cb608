import { checkScenario, renderFailure, type CheckedScenario } from '../../bench/scenarios/check';

/**
 * Seeded scenarios on the simulator (issue 26, "Scenarios and invariants"): each draws a rolling
 * upgrade (lock-step or window with its controls), its connectors, its site (busy nodes, admin drains,
 * boot failures, nodes that never return, failing site calls, jobs that keep arriving) and an
 * operator's stop, resume, cancel or kill at a random moment, runs it on the embedded engine on
 * virtual time, and checks every invariant against the site's own record
 * (bench/scenarios/invariants.ts). A failure prints its seed and the command that replays it.
 * SCENARIO_SEED moves the block of seeds (the default is fixed, so a run is reproducible);
 * SCENARIO_COUNT changes how many.
 */
const FIRST_SEED = Number(process.env.SCENARIO_SEED ?? 26_000);
const COUNT = Number(process.env.SCENARIO_COUNT ?? 300);
/** Jest runs the blocks of one file one after the other: a few blocks keep each test's time readable. */
const BLOCK = 50;

describe(`${COUNT} seeded scenarios from seed ${FIRST_SEED}, checked against the site's record`, () => {
  const known = new Map<number | string, number>();
  afterAll(() => {
    if (known.size > 0) console.log(`scenarios: known bugs hit (issue 26 items): ${[...known].map(([item, n]) => `item ${item}: ${n}`).join(', ')}`);
  });

  for (let from = FIRST_SEED; from < FIRST_SEED + COUNT; from += BLOCK) {
    const to = Math.min(from + BLOCK, FIRST_SEED + COUNT);
    it(`seeds ${from}-${to - 1} keep every invariant`, async () => {
      const failures: CheckedScenario[] = [];
      for (let seed = from; seed < to; seed++) {
        const checked = await checkScenario(seed);
        for (const v of checked.known) known.set(v.item, (known.get(v.item) ?? 0) + 1);
        if (checked.violations.length > 0) failures.push(checked);
      }
      expect(failures.map(renderFailure)).toEqual([]);
    }, 600_000);
  }
});
