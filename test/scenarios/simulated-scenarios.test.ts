import { describeScenarioBlocks } from './scenario-blocks';

/**
 * The first half of the 300 seeded scenarios of `npm test` (the second: simulated-scenarios-2.test.ts;
 * two files, so that jest runs them on two cores). SCENARIO_SEED moves the seeds, SCENARIO_COUNT
 * changes how many; `npm run scenarios -- --seed S --count N` runs any others.
 */
const FIRST = Number(process.env.SCENARIO_SEED ?? 26_000);
const COUNT = Number(process.env.SCENARIO_COUNT ?? 300);
describeScenarioBlocks(FIRST, Math.ceil(COUNT / 2));
