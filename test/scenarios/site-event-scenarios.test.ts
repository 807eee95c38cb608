import { armsSiteTriggers } from '../../bench/scenarios/check';
import { describeScenarioSeeds } from './scenario-blocks';

/**
 * Rolling upgrades with the site's triggers armed (issue 29 item 4), beside the third of simulated-scenarios'
 * upgrades that arm them: the first SITE_EVENT_COUNT seeds from SITE_EVENT_SEED that do (bench/scenarios/scenario.ts
 * drawSiteEvents: the relay killed and brought back, firings lost, its program failing, firings delivered twice, a
 * stop, cancel or kill while parked), each checked against the site's record (the simulated slurmctld's triggers,
 * its change log) and the intake's (bench/scenarios/site-event-invariants.ts).
 * `npm run scenarios -- --site-events --seed S --count N` runs any others.
 */
const FIRST = Number(process.env.SITE_EVENT_SEED ?? 50_000);
const COUNT = Number(process.env.SITE_EVENT_COUNT ?? 60);
const seeds: number[] = [];
for (let seed = FIRST; seeds.length < COUNT; seed++) if (armsSiteTriggers(seed)) seeds.push(seed);
describeScenarioSeeds(`${COUNT} seeded scenarios with the site's triggers armed from seed ${FIRST}`, seeds);
