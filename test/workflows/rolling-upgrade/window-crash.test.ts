import { simulatedSiteClients } from '../../../local/simulated-site-clients';
import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { buildSessionReport } from '../../../control-plane/reports/session-report';
import type { WorkloadManager } from '../../../ports/site';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { eventually, startTestRuntime } from '../../support/embedded';

/** Every node drained once, booted once and upgraded; the counts on the session item are the records' own. */
async function expectEachNodeOnce(runtime: EmbeddedRuntime, upgradeId: string, count: number) {
  const site = runtime.simulator.state();
  const report = await buildSessionReport(runtime.store, (await runtime.store.getSession(upgradeId))!);
  for (let i = 0; i < count; i++) {
    const name = nodeName(i);
    const node = site.nodes[name]!;
    expect({ name, drains: node.drainCount, boots: node.bootCount, status: report.nodes[name]!.status, wlm: node.wlmState }).toEqual({
      name,
      drains: 1,
      boots: 1,
      status: 'UPGRADED',
      wlm: 'IDLE',
    });
  }
  expect(site.violations).toEqual([]);
  expect(report).toMatchObject({ state: 'READY', completed: true });
  expect((await runtime.store.getSession(upgradeId))!.progress.counts).toEqual({ upgraded: count, failed: 0 });
}

describe('mode window, a process that died', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it.each(['DRAINING', 'BOOTING', 'BOOTED'])('stopped with a node %s, resumed ({resumeUpgradeId}): every node drained once and booted once', async (phase) => {
    // Node 1 runs a job for a while: it is DRAINING long enough to be caught there.
    runtime = await startTestRuntime({ site: buildSite(6, { node: (i) => (i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 300 } } : {}) }) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 2 }));
    await eventually(runtime, async () => ((await runtime!.store.listNodes(run.id)).some((n) => n.phase === phase) ? true : undefined), `a node ${phase}`);
    const rt = runtime;
    await rt.clock.busy(async () => rt.engine.stop(run.executionArn));
    expect((await run.outcome).status).toBe('ABORTED');

    const resumed = await runtime.run('rollingUpgrade', { resumeUpgradeId: run.id });
    expect((await resumed.outcome).status).toBe('SUCCEEDED');
    await expectEachNodeOnce(runtime, run.id, 6);
  });

  it('dies right after a drain: the drained node was recorded in flight first, and finishes even though the run is paused meanwhile', async () => {
    let crashes = 0;
    runtime = await startTestRuntime({
      site: buildSite(4),
      connectors: (simulator) => {
        const clients = simulatedSiteClients(simulator);
        const wm = clients.workloadManager;
        // The first drain reaches Slurm, then the increment dies before anything after it.
        const drainNodes: WorkloadManager['drainNodes'] = async (names, reason) => {
          await wm.drainNodes(names, reason);
          if (crashes++ === 0) throw new Error('the increment died after its drain');
        };
        return { ...clients, workloadManager: Object.assign(Object.create(wm) as WorkloadManager, { drainNodes }) };
      },
    });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 1 }));
    const session = () => runtime!.store.getSession(run.id);
    await eventually(runtime, async () => ((await session())?.progress.errorCount ? true : undefined), 'the increment that died');
    // The drained node is in the index and recorded DRAINING: nothing drained is unknown to the session.
    const died = (await runtime.clock.busy(() => session()))!;
    expect(died.progress.window?.inFlight).toEqual([0]);
    expect((await runtime.clock.busy(() => runtime!.store.getNodes(run.id, [{ name: nodeName(0), index: 0 }])))[0]).toMatchObject({
      status: 'IN_PROGRESS',
      phase: 'DRAINING',
    });
    expect(runtime.simulator.state().nodes[nodeName(0)]).toMatchObject({ drainCount: 1 });

    // Paused before the retry: the node in flight still finishes; nothing new starts until the pause is lifted.
    await runtime.clock.busy(() => runtime!.gate(run.id, 'pause'));
    await eventually(runtime, async () => (runtime!.engine.tokens.waiting === 1 ? true : undefined), 'parked, paused');
    const paused = await runtime.clock.busy(async () => buildSessionReport(runtime!.store, (await session())!));
    expect(paused.nodes[nodeName(0)]).toMatchObject({ status: 'UPGRADED' });
    expect(paused.counts).toMatchObject({ UPGRADED: 1, NOT_STARTED: 3 });
    await runtime.clock.busy(() => runtime!.gate(run.id, 'unpause'));
    expect((await run.outcome).status).toBe('SUCCEEDED');
    await expectEachNodeOnce(runtime, run.id, 4);
  });
});
