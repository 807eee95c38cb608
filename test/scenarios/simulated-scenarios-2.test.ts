import { describeScenarioBlocks } from './scenario-blocks';

/** The second half of the 300 seeded scenarios of `npm test` (see simulated-scenarios.test.ts). */
const FIRST = Number(process.env.SCENARIO_SEED ?? 26_000);
const COUNT = Number(process.env.SCENARIO_COUNT ?? 300);
describeScenarioBlocks(FIRST + Math.ceil(COUNT / 2), COUNT - Math.ceil(COUNT / 2));
