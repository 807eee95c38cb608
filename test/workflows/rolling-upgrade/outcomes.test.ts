import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { runUpgrade, startTestRuntime } from '../../support/embedded';

describe('rolling-upgrade workflow on the embedded engine', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('upgrades every node when all goes well, a step at a time', async () => {
    runtime = await startTestRuntime({ site: buildSite(7) });
    const { outcome, report } = await runUpgrade(runtime, upgradeRequest({ upgradeStepSize: 3 }));

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report.state).toBe('READY');
    expect(report.completed).toBe(true);
    expect(report.stepCount).toBe(3);
    expect(Object.values(report.nodes).every((n) => n.status === 'UPGRADED')).toBe(true);
    expect(report.messages.at(-1)).toBe('Upgrade Session Completed');
    const site = runtime.simulator.state();
    for (let i = 0; i < 7; i++) {
      // Rebooted exactly once, and back in service without our drain.
      expect(site.nodes[nodeName(i)]).toMatchObject({ bootCount: 1, drainCount: 1, wlmState: 'IDLE', killedJobs: 0 });
    }
    expect(site.groups.upgrading).toEqual([]);
    expect(site.groups.failed).toEqual([]);
    expect(site.violations).toEqual([]);
  });

  it('fails nodes that never return with upgrading-time-out-wlm-waiting and still completes', async () => {
    runtime = await startTestRuntime({ site: buildSite(4, { node: (i) => (i === 1 ? { faults: { returnToService: 'never' } } : {}) }) });
    const { report } = await runUpgrade(runtime, upgradeRequest({ wlmReturnTimeoutSeconds: 300 }));

    expect(report.completed).toBe(true);
    expect(report.nodes[nodeName(1)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-time-out-wlm-waiting' });
    expect(report.counts).toMatchObject({ UPGRADED: 3, FAILED: 1 });
    const site = runtime.simulator.state();
    expect(site.groups.failed).toEqual([nodeName(1)]);
    expect(site.nodes[nodeName(1)]!.wlmState).toMatch(/^FAIL/);
    expect(site.nodes[nodeName(1)]!.wlmReason).toMatch(/^upgrading-time-out-wlm-waiting [0-9a-f-]{36}$/);
  });

  it('fails every node with upgrading-boot-session-failed when every boot fails', async () => {
    runtime = await startTestRuntime({ site: buildSite(5, { node: () => ({ faults: { boot: 'fail' } }) }) });
    const { outcome, report } = await runUpgrade(runtime, upgradeRequest());

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report.completed).toBe(true);
    for (const node of Object.values(report.nodes)) expect(node).toMatchObject({ status: 'FAILED', reason: 'upgrading-boot-session-failed' });
    expect(runtime.simulator.state().groups.failed).toHaveLength(5);
  });

  it('fails a node whose boot hangs at the boot timeout and goes on', async () => {
    runtime = await startTestRuntime({ site: buildSite(4, { node: (i) => (i === 0 ? { faults: { boot: 'hang' } } : {}) }) });
    const { report } = await runUpgrade(runtime, upgradeRequest({ bootTimeoutSeconds: 600 }));

    expect(report.nodes[nodeName(0)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-time-out-booting' });
    expect(report.nodes[nodeName(1)]!.status).toBe('UPGRADED');
    expect(report.counts.UPGRADED).toBe(3);
  });

  it('waits for busy nodes to drain of their jobs before booting them, killing no job', async () => {
    runtime = await startTestRuntime({
      site: buildSite(4, { node: (i) => (i === 0 ? { wlm: { state: 'ALLOCATED', busySeconds: 1500 } } : {}) }),
    });
    // Polls a minute apart: on virtual time every poll of the 1,500-second wait runs.
    const { report } = await runUpgrade(runtime, upgradeRequest({ pollIntervalSeconds: 60 }));

    expect(report.counts.UPGRADED).toBe(4);
    const site = runtime.simulator.state();
    expect(site.nodes[nodeName(0)]!.killedJobs).toBe(0);
    expect(site.nodes[nodeName(0)]!.bootCount).toBe(1);
    // Rebooting a busy node kills its job: one boot and no killed job mean the boot waited for the
    // job to end, which cannot be before 1,500 s after the simulated clock began.
    expect(runtime.clock.now() - runtime.clock.startAt).toBeGreaterThanOrEqual(1500 * 1000);
  });

  it('fails nodes still busy at the quiesce timeout and boots the rest of their step', async () => {
    runtime = await startTestRuntime({
      site: buildSite(2, { node: (i) => (i === 0 ? { wlm: { state: 'ALLOCATED', busySeconds: 100_000 } } : {}) }),
    });
    const { report } = await runUpgrade(runtime, upgradeRequest({ quiesceTimeoutSeconds: 300 }));

    expect(report.nodes[nodeName(0)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-time-out-quiescing' });
    expect(report.nodes[nodeName(1)]!.status).toBe('UPGRADED');
    const site = runtime.simulator.state();
    expect(site.nodes[nodeName(0)]).toMatchObject({ bootCount: 0, killedJobs: 0 });
  });

  it('empties a pre-filled failed group at the start', async () => {
    const site = buildSite(6, {
      groups: { compute: [0, 1, 2, 3].map(nodeName), upgrading: [], failed: [nodeName(4), nodeName(5)] },
    });
    runtime = await startTestRuntime({ site });
    const { report } = await runUpgrade(runtime, upgradeRequest());

    expect(report.counts.UPGRADED).toBe(4);
    expect(runtime.simulator.state().groups.failed).toEqual([]);
  });

  it('empties a pre-filled upgrading group before booting, so strangers are not rebooted', async () => {
    const site = buildSite(5, { groups: { compute: [0, 1, 2, 3].map(nodeName), upgrading: [nodeName(4)], failed: [] } });
    runtime = await startTestRuntime({ site });
    const { report } = await runUpgrade(runtime, upgradeRequest());

    expect(report.counts.UPGRADED).toBe(4);
    expect(Object.keys(report.nodes)).not.toContain(nodeName(4));
    const state = runtime.simulator.state();
    expect(state.nodes[nodeName(4)]!.bootCount).toBe(0);
    expect(state.groups.upgrading).toEqual([]);
  });

  it('upgrades the plan snapshot taken at start, not nodes added to the group later', async () => {
    runtime = await startTestRuntime({ site: buildSite(6, { groups: { compute: [0, 1, 2, 3].map(nodeName), upgrading: [], failed: [] } }) });
    const { report } = await runUpgrade(runtime, upgradeRequest({ upgradeStepSize: 1 }));
    expect(Object.keys(report.nodes)).toEqual([0, 1, 2, 3].map(nodeName));
  });
});
