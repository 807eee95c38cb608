import { createSiteFromProfile } from '../../../adapters/site';
import { parseSiteProfile } from '../../../core/site/site-profile';
import { siteProfileFor } from '../../../simulator';
import { startTestRuntime } from '../../support/embedded';
import { freshSsmConnectorsPerCall, ssmConnectors } from '../../support/ssm-connectors';
import { EXAMPLE_GRAPH, exampleSite, runTaskGraph, startsBySecond } from '../../support/task-graph-runs';

type Connectors = Parameters<typeof startTestRuntime>[0]['connectors'];

/** The example's site with node-7 failing setup_services, run through `connectors` (none: the default HTTP site). */
async function run(connectors: Connectors) {
  const runtime = await startTestRuntime({
    site: exampleSite({ 'node-7': { faults: { tasks: { setup_services: 'fail' } } } }),
    ...(connectors ? { connectors } : {}),
  });
  try {
    const finished = await runTaskGraph(runtime, { graph: EXAMPLE_GRAPH });
    return { ...finished, commands: runtime.simulator.simulator.headNode.commandLog };
  } finally {
    await runtime.close();
  }
}

/**
 * The graph through a `rollout simulate --transport ssm` profile, as a real Slurm site runs it:
 * the nodes and their roles from `sinfo` (role:<role> features), task commands through pdsh on the
 * head node, all over the simulator's SSM endpoint with the real @aws-sdk/client-ssm.
 */
describe('a task graph over SSM (scontrol, the slurm inventory, pdsh on the head node)', () => {
  it('runs as over the HTTP services: the same states, the same reasons, the same times (Slurm lists the controllers by name)', async () => {
    const overHttp = await run(undefined);
    const overSsm = await run(ssmConnectors);
    expect(overSsm.view.nodes).toEqual(overHttp.view.nodes);
    expect(overSsm.view.blocked).toEqual(overHttp.view.blocked);
    expect(overSsm.view.errors).toEqual({ 'node-7': { setup_services: 'failed: exit 1' } });
    // HSM lists the nodes in the site's order (node-4 before node-2), sinfo by name: the controllers pair up differently, at the same times.
    const byName = (log: typeof overSsm.site.taskLog) =>
      [...log].sort((a, b) => a.start - b.start || a.node.localeCompare(b.node) || a.task.localeCompare(b.task));
    expect(byName(overSsm.site.taskLog).map((e) => [e.start, e.end, e.result])).toEqual(byName(overHttp.site.taskLog).map((e) => [e.start, e.end, e.result]));
    expect(startsBySecond(overHttp.site.taskLog)[2]).toEqual([60, ['node-2/setup_network', 'node-4/setup_network']]);
    expect(startsBySecond(overSsm.site.taskLog)[2]).toEqual([60, ['node-2/setup_network', 'node-3/setup_network']]);
    expect(startsBySecond(overSsm.site.taskLog)[4]).toEqual([120, ['node-4/setup_network', 'node-5/setup_network']]);
    // The roles came from sinfo's features; each batch of alike tasks went out as one pdsh command.
    expect(overSsm.commands).toContain("'sinfo' '--noheader' '--format=%R %f %N'");
    expect(overSsm.commands.filter((c) => c.startsWith('pdsh -S -w '))).toHaveLength(8);
  });

  it('keeps nothing between calls but the table (one Lambda per activity): every call with connectors built afresh', async () => {
    const fresh = await run(freshSsmConnectorsPerCall);
    const shared = await run(ssmConnectors);
    expect(fresh.view.nodes).toEqual(shared.view.nodes);
    expect(fresh.site.taskLog).toEqual(shared.site.taskLog);
  });

  it('reaches each node on its own with the `{node}` form (ssh), the node and the command each one quoted word', async () => {
    const runtime = await startTestRuntime({
      site: exampleSite(),
      connectors: async (simulator, { connectorState }) => {
        const profile = parseSiteProfile({ ...siteProfileFor(simulator.urls, 'ssm', 1), tasks: { nodeExec: 'ssh -o BatchMode=yes {node} {command}' } });
        const { site, taskCommands } = await createSiteFromProfile(profile, { connectorState, clock: { now: () => simulator.simulator.clock.now() } });
        return { ...site, ...(taskCommands ? { taskCommands } : {}) };
      },
    });
    try {
      const { view, site } = await runTaskGraph(runtime, { graph: EXAMPLE_GRAPH, selection: { nodes: ['node-1', 'node-2', 'node-4'] } });
      expect(view.status).toBe('SUCCEEDED');
      expect(Object.keys(view.nodes).sort()).toEqual(['node-1', 'node-2', 'node-4']);
      const ssh = runtime.simulator.simulator.headNode.commandLog.filter((c) => c.startsWith('ssh '));
      expect(ssh).toHaveLength(6);
      expect(ssh[0]).toMatch(/^ssh -o BatchMode=yes 'node-1' 'ROLLOUT_TASK='\\''setup_network'\\'' timeout 120 \/bin\/sh -c '\\''run_setup_network.sh'\\''/);
      expect(startsBySecond(site.taskLog).map(([second, runs]) => [second, runs.length])).toEqual([
        [0, 1],
        [30, 1],
        [60, 2],
        [90, 2],
      ]);
    } finally {
      await runtime.close();
    }
  });
});
