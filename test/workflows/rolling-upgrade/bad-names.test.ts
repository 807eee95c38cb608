import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { buildSessionReport } from '../../../control-plane/reports/session-report';
import { parseSiteDefinition } from '../../../simulator';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { eventually, startTestRuntime } from '../../support/embedded';

/** Labels and node names that must stop a session before any node is touched (issue 12). */
describe('labels and node names checked before any node is touched', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('an upgrading group that does not exist: no node drained, the session says so, and a cancel ends it (no loop in CLEANUP)', async () => {
    runtime = await startTestRuntime({ site: buildSite(4) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ upgradingLabel: 'upgrading-typo' }));
    await eventually(
      runtime,
      async () => {
        const messages = await runtime!.store.messages.list(run.id);
        return messages.some((m) => m.includes("failed to obtain Node Group named 'upgrading-typo'")) || undefined;
      },
      'the missing group reported',
    );
    const site = runtime.simulator.state();
    for (let i = 0; i < 4; i++) expect(site.nodes[nodeName(i)]!.drainCount).toBe(0);

    const rt = runtime;
    await rt.clock.busy(() => rt.store.requestCancel(run.id));
    expect((await run.outcome).status).toBe('SUCCEEDED');
    const report = await buildSessionReport(runtime.store, (await runtime.store.getSession(run.id))!);
    expect(report.state).toBe('DELETED');
    for (let i = 0; i < 4; i++) expect(runtime.simulator.state().nodes[nodeName(i)]!.drainCount).toBe(0);
  });

  it.each([
    ['..', '..'],
    ['.', '.'],
    ['a 5,000-character name', 'n'.repeat(5000)],
  ])('a starting group with a node named %s: refused naming it, no node touched', async (_what, bad) => {
    const good = buildSite(3);
    const site = parseSiteDefinition({
      nodes: [...good.nodes, { name: 'placeholder', nid: 99 }],
      groups: { compute: [nodeName(0), 'placeholder', nodeName(1)], upgrading: [], failed: [] },
      bootTemplates: ['img-2'],
      timing: { bootSeconds: 60, returnSeconds: 10 },
    });
    // A site file refuses such a name; a real site's inventory may still serve one, so the simulator is given it directly.
    site.nodes.at(-1)!.name = bad;
    site.groups.compute![1] = bad;
    runtime = await startTestRuntime({ site });
    const run = await runtime.run('rollingUpgrade', upgradeRequest());
    const outcome = await run.outcome;
    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toBe('InvalidInputError');
    expect(outcome.cause).toMatch(/compute\[1\]: .* is not a valid node name/);
    const state = runtime.simulator.state();
    for (const node of Object.values(state.nodes)) expect({ drains: node.drainCount, boots: node.bootCount }).toEqual({ drains: 0, boots: 0 });
  });
});
