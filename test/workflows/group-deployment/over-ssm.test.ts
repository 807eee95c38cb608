import { startTestRuntime } from '../../support/embedded';
import { deploymentSite, groupOf, QUICK_POLL, runDeployment, type DeploymentNodeInput } from '../../support/deployment-sites';
import { freshSsmConnectorsPerCall, ssmConnectors } from '../../support/ssm-connectors';

const ok = (name: string): DeploymentNodeInput => ({ name });
const min1 = { success_criteria: { minimum_successful_nodes: 1 } };

describe('group deployment through the command provisioner over SSM', () => {
  it('gives the report and site state of the HTTP provisioner: failed phases per node, dependents failed', async () => {
    const nodes: DeploymentNodeInput[] = [
      { name: 'a00', faults: { prepare: 'fail' } },
      ok('a01'),
      ok('b00'),
      { name: 'c00', faults: { deploy: 'fail' } },
      ok('c01'),
      ok('d00'),
    ];
    const groups = [
      groupOf('a', ['a00', 'a01'], { success_criteria: { minimum_successful_nodes: 2 } }),
      groupOf('b', ['b00'], { depends_on: ['a'] }),
      groupOf('c', ['c00', 'c01'], min1),
      groupOf('d', ['d00'], { depends_on: ['c'] }),
    ];
    const run = async (viaSsm: boolean | 'fresh per call') => {
      const connectors = viaSsm === 'fresh per call' ? freshSsmConnectorsPerCall : ssmConnectors;
      const runtime = await startTestRuntime({ site: deploymentSite(nodes), ...(viaSsm ? { connectors } : {}) });
      try {
        const finished = await runDeployment(runtime, { strategy: { groups }, ...QUICK_POLL });
        const commands = viaSsm ? runtime.simulator.simulator.headNode.commandLog.filter((c) => c.startsWith('provision ')) : [];
        return { status: finished.outcome.status, report: finished.report, nodes: finished.site.nodes, commands };
      } finally {
        await runtime.close();
      }
    };
    const overHttp = await run(false);
    const overSsm = await run(true);
    expect(overSsm.status).toBe(overHttp.status);
    expect(overSsm.report?.groups).toEqual(overHttp.report?.groups);
    expect(overSsm.nodes).toEqual(overHttp.nodes);
    expect(Object.values(overSsm.report?.groups ?? {}).map((g) => g.stage)).toContain('FAILED');
    // One command per batch and phase, the nodes as a quoted hostlist.
    expect(overSsm.commands).toContain("provision prepare 'a[00-01]'");
    expect(overSsm.commands).not.toContain("provision deploy 'a[00-01]'");
    // Every call with its own provisioner instance (one Lambda per activity): the actions come from the table, each command runs once.
    const fresh = await run('fresh per call');
    expect(fresh.report?.groups).toEqual(overHttp.report?.groups);
    expect(fresh.nodes).toEqual(overHttp.nodes);
    expect(fresh.commands).toEqual(overSsm.commands);
  });
});
