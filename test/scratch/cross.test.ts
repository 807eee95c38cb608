import { startTestRuntime } from '../support/embedded';
import { buildSite, nodeName, upgradeRequest } from '../support/sites';
import { groupOf, QUICK_POLL } from '../support/deployment-sites';

const GRAPH = { tasks: [
  { id: 'drain', type: 'drain', role: ['compute'] },
  { id: 'reboot', type: 'reboot', role: ['compute'], requires: ['drain'], parameters: { template: 'img-2' } },
  { id: 'resume', type: 'resume', role: ['compute'], requires: ['reboot'] },
] };

it('cross', async () => {
  const runtime = await startTestRuntime({ site: buildSite(4, { node: () => ({ roles: ['compute'] }), timing: { bootSeconds: 20, returnSeconds: 10, prepareSeconds: 30, deploySeconds: 30 } }) });
  const t0 = Date.now();
  try {
    const names = [0, 1, 2, 3].map(nodeName);
    const runs = await Promise.all([
      runtime.run('rollingUpgrade', upgradeRequest()),
      runtime.run('groupDeployment', { strategy: { groups: [groupOf('all', names)] }, ...QUICK_POLL }),
      runtime.run('taskGraph', { graph: GRAPH, pollIntervalSeconds: 10 }),
    ]);
    const done = runs.map((r, i) => r.outcome.then((o) => console.log(i, o.status, (runtime.clock.now() - runtime.clock.startAt) / 1000, 's sim', Date.now() - t0, 'ms', o.figures.stateTransitions)));
    await Promise.race([Promise.all(done), new Promise((r) => setTimeout(r, 50000))]);
    console.log((await runtime.store.listMessages(runs[0]!.id)).join('\n'));
    console.log((await runtime.deployments.listMessages(runs[1]!.id)).join('\n'));
    console.log((await runtime.taskRuns.listMessages(runs[2]!.id)).join('\n'));
    console.log(runtime.simulator.state().changes.map((c) => `${(c.at - runtime.clock.startAt) / 1000} ${c.node} ${c.change} ${c.by?.slice(0, 8)}`).join('\n'));
  } finally {
    await runtime.close();
  }
}, 120000);
