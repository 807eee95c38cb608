import { benchRollingUpgrade, type RollingUpgradeScenario } from './rolling-upgrade-bench';
import { renderFigures } from './figures';
import { benchGroupDeployment, type GroupDeploymentScenario } from './group-deployment-bench';
import { benchSsmRollingUpgrade } from './ssm-bench';

/**
 * `npm run bench`: fleet-scale runs on the embedded default, printing figures (not asserting them).
 * `npm run bench -- --quick` runs smaller fleets, to check the harness; `--only=upgrade|deploy|ssm` runs one kind
 * (`ssm`: the step-size-100 upgrade through scontrol over SSM, with SSM calls and output bytes per node).
 */
const quick = process.argv.includes('--quick');
const nodes = quick ? 200 : 2000;

const scenarios: RollingUpgradeScenario[] = [
  { name: `rolling upgrade, ${nodes} nodes, step size 1 (the history-quota worst case)`, nodes, stepSize: 1, bootFailEvery: 97, neverReturnsEvery: 251, busyEvery: 50 },
  { name: `rolling upgrade, ${nodes} nodes, step size 100`, nodes, stepSize: 100, bootFailEvery: 97, neverReturnsEvery: 251, busyEvery: 50 },
];

const deployment: GroupDeploymentScenario = quick
  ? { name: 'group deployment, 1,000 nodes in 10 groups', groups: 10, nodesPerGroup: 100, maxParallelGroups: 4 }
  : { name: 'group deployment, 10,000 nodes in 100 groups', groups: 100, nodesPerGroup: 100, maxParallelGroups: 4 };

const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
if (only === 'ssm') {
  process.stdout.write(`${await benchSsmRollingUpgrade(scenarios[1]!)}\n\n`);
} else if (only !== 'deploy') {
  for (const scenario of scenarios) process.stdout.write(`${renderFigures(await benchRollingUpgrade(scenario))}\n\n`);
}
if (only !== 'upgrade' && only !== 'ssm') process.stdout.write(`${renderFigures(await benchGroupDeployment(deployment))}\n\n`);
