import { benchRollingUpgrade, type RollingUpgradeScenario } from './rolling-upgrade-bench';
import { renderFigures } from './figures';

/**
 * `npm run bench`: fleet-scale runs on the embedded default, printing figures (not asserting them).
 * `npm run bench -- --quick` runs smaller fleets, to check the harness.
 */
const quick = process.argv.includes('--quick');
const nodes = quick ? 200 : 2000;

const scenarios: RollingUpgradeScenario[] = [
  { name: `rolling upgrade, ${nodes} nodes, step size 1 (the history-quota worst case)`, nodes, stepSize: 1, bootFailEvery: 97, neverReturnsEvery: 251, busyEvery: 50, timeScale: 10_000 },
  { name: `rolling upgrade, ${nodes} nodes, step size 100`, nodes, stepSize: 100, bootFailEvery: 97, neverReturnsEvery: 251, busyEvery: 50, timeScale: 10_000 },
];

for (const scenario of scenarios) {
  const figures = await benchRollingUpgrade(scenario);
  process.stdout.write(`${renderFigures(figures)}\n\n`);
}
