import { simulatedSiteClients } from '../../../local/simulated-site-clients';
import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { runUpgrade, startTestRuntime } from '../../support/embedded';

const NHC = 'ssh -o BatchMode=yes {node} /usr/sbin/nhc';

/**
 * healthCheck: a node returns to service only once Slurm shows it back and the check command, run on
 * the simulated head node over its SSM endpoint (the real SSM client), exits 0. Node 1's check fails,
 * node 2's never returns (its 120 s timeout fails it); the others pass.
 */
const faultySite = () => buildSite(4, { node: (i) => (i === 1 ? { faults: { healthCheck: 'fail' } } : i === 2 ? { faults: { healthCheck: 'hang' } } : {}) });

describe('rolling upgrade health check', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it.each([
    ['window', { mode: 'window', maxUnavailable: 4 }],
    ['lockstep', { upgradeStepSize: 4 }],
  ])('%s: returns only the nodes whose check passed; the others fail with upgrading-health-check-failed and stay out of service', async (_mode, controls) => {
    runtime = await startTestRuntime({ site: faultySite() });
    const { report, upgradeId } = await runUpgrade(runtime, upgradeRequest({ ...controls, healthCheck: { command: NHC, timeoutSeconds: 120 } }));

    expect(report.completed).toBe(true);
    // The counts the progress display reads from the session item are the records' own.
    expect((await runtime.store.getSession(upgradeId))!.progress.counts).toEqual({ upgraded: 2, failed: 2 });
    expect(report.nodes[nodeName(0)]).toMatchObject({ status: 'UPGRADED' });
    expect(report.nodes[nodeName(3)]).toMatchObject({ status: 'UPGRADED' });
    expect(report.nodes[nodeName(1)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-health-check-failed' });
    expect(report.nodes[nodeName(2)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-health-check-failed' });
    const site = runtime.simulator.state();
    for (let i = 0; i < 4; i++) expect(site.nodes[nodeName(i)]).toMatchObject({ bootCount: 1, drainCount: 1, healthCheckCount: 1 });
    // The failed ones are failed in Slurm (never resumed) and in the failed group; the healthy ones are back.
    expect(site.nodes[nodeName(1)]).toMatchObject({ resumeCount: 0, wlmReason: `upgrading-health-check-failed ${upgradeId}` });
    expect(site.nodes[nodeName(2)]).toMatchObject({ resumeCount: 0, wlmReason: `upgrading-health-check-failed ${upgradeId}` });
    expect([...site.groups.failed!].sort()).toEqual([nodeName(1), nodeName(2)]);
    for (const i of [0, 3]) expect(site.nodes[nodeName(i)]).toMatchObject({ wlmState: 'IDLE', resumeCount: 1 });
    // Every command reached the head node quoted, with the node in place of {node}.
    expect(runtime.simulator.simulator.headNode.commandLog.filter((c) => c.includes('nhc'))).toHaveLength(4);
    expect(runtime.simulator.simulator.headNode.commandLog).toContain(`ssh -o BatchMode=yes '${nodeName(0)}' /usr/sbin/nhc`);
    const messages = report.messages.join('\n');
    expect(messages).toContain(`${nodeName(1)} (exit 1: ERROR:  nhc:  Health check failed:`);
    expect(messages).toContain(`${nodeName(2)} (no result from its health check within 120 s)`);
  });

  it('keeps a node out of service while its check runs: it returns no earlier than the check allows', async () => {
    runtime = await startTestRuntime({ site: buildSite(1) });
    const { report } = await runUpgrade(runtime, upgradeRequest({ mode: 'window', maxUnavailable: 1, healthCheck: { command: NHC } }));
    expect(report.nodes[nodeName(0)]).toMatchObject({ status: 'UPGRADED' });
    // Boot 60 s + return 10 s; then the check is started and seen passed at a later poll (10 s), and only then resumed.
    const [[start, end]] = runtime.simulator.state().nodes[nodeName(0)]!.outOfService as [[number, number]];
    expect(end - start).toBeGreaterThanOrEqual(70 + 10);
  });

  it('refuses healthCheck.command at Open Session on a site with no command transport, naming the field', async () => {
    runtime = await startTestRuntime({
      site: buildSite(2),
      connectors: (simulator) => simulatedSiteClients(simulator),
    });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ healthCheck: { command: NHC } }));
    const outcome = await run.outcome;
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'InvalidInputError' });
    expect(outcome.cause).toContain('healthCheck.command');
    expect(runtime.simulator.state().nodes[nodeName(0)]!.drainCount).toBe(0);
  });

  it('refuses reserveSlots at Open Session on a site with no command transport, naming the field', async () => {
    runtime = await startTestRuntime({
      site: buildSite(2),
      connectors: (simulator) => simulatedSiteClients(simulator),
    });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', reserveSlots: true }));
    const outcome = await run.outcome;
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'InvalidInputError' });
    expect(outcome.cause).toContain('reserveSlots');
    expect(runtime.simulator.state().nodes[nodeName(0)]!.drainCount).toBe(0);
  });
});
