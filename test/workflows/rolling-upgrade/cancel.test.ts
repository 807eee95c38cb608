import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { buildSessionReport } from '../../../control-plane/reports/session-report';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { eventually, startTestRuntime } from '../../support/embedded';

/** Cancels at the simulated instant the session was seen at. */
const cancel = (runtime: EmbeddedRuntime, upgradeId: string) => runtime.clock.busy(() => runtime.store.requestCancel(upgradeId));

async function waitForStage(runtime: EmbeddedRuntime, upgradeId: string, step: number, stage: string) {
  return eventually(
    runtime,
    async () => {
      const session = await runtime.store.getSession(upgradeId);
      return session && session.progress.step === step && session.progress.stage === stage ? session : undefined;
    },
    `step ${step} ${stage}`,
  );
}

describe('cancelling a running rolling upgrade (CRUS deletion rules)', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('before booting in step 0: resumes the step nodes and fails nothing', async () => {
    // A long job keeps step 0 in QUIESCING.
    runtime = await startTestRuntime({ site: buildSite(6, { node: (i) => (i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 50_000 } } : {}) }) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest());
    await waitForStage(runtime, run.id, 0, 'QUIESCING');
    expect(runtime.simulator.state().nodes[nodeName(0)]!.wlmState).toBe('DRAINED');

    await cancel(runtime, run.id);
    const outcome = await run.outcome;

    expect(outcome.status).toBe('SUCCEEDED');
    const report = await buildSessionReport(runtime.store, (await runtime.store.getSession(run.id))!);
    expect(report.state).toBe('DELETED');
    expect(report.completed).toBe(false);
    expect(report.counts).toMatchObject({ FAILED: 0, UPGRADED: 0, NOT_STARTED: 6 });
    const site = runtime.simulator.state();
    expect(site.groups.failed).toEqual([]);
    expect(site.nodes[nodeName(0)]!.wlmState).toBe('IDLE'); // our drain lifted
    expect(site.nodes[nodeName(1)]!.wlmState).toBe('ALLOCATED'); // its job goes on, undisturbed
    for (let i = 0; i < 6; i++) expect(site.nodes[nodeName(i)]!.bootCount).toBe(0);
    // Locks are released: another session can take the nodes at once.
    expect((await runtime.store.locks.getLockOwners([0, 1].map(nodeName))).size).toBe(0);
  });

  it('after booting: fails every node from the current step on that has not completed', async () => {
    // Step 1's boot hangs, so the session sits in BOOTING at step 1.
    runtime = await startTestRuntime({ site: buildSite(6, { node: (i) => (i === 2 ? { faults: { boot: 'hang' } } : {}) }) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ bootTimeoutSeconds: 100_000 }));
    await waitForStage(runtime, run.id, 1, 'BOOTING');

    await cancel(runtime, run.id);
    await run.outcome;

    const report = await buildSessionReport(runtime.store, (await runtime.store.getSession(run.id))!);
    expect(report.state).toBe('DELETED');
    expect(report.nodes[nodeName(0)]!.status).toBe('UPGRADED');
    expect(report.nodes[nodeName(1)]!.status).toBe('UPGRADED');
    for (let i = 2; i < 6; i++) {
      expect(report.nodes[nodeName(i)]).toMatchObject({ status: 'FAILED', reason: 'upgrade-session-deleted-before-completion' });
    }
    const site = runtime.simulator.state();
    expect([...site.groups.failed!].sort()).toEqual([2, 3, 4, 5].map(nodeName));
    expect(site.nodes[nodeName(4)]!.wlmReason).toMatch(/^upgrade-session-deleted-before-completion [0-9a-f-]{36}$/);
    expect(site.groups.upgrading).toEqual([]);
    expect(report.messages).toContain('Upgrade Session Deleted');
    // The progress display's counts: step 0 counted when it ended, the rest as the delete sequence failed it.
    expect((await runtime.store.getSession(run.id))!.progress.counts).toEqual({ upgraded: 2, failed: 4 });
  });

  it('at a later step before booting: fails the remaining nodes too (CRUS rule for step > 0)', async () => {
    runtime = await startTestRuntime({ site: buildSite(6, { node: (i) => (i === 3 ? { wlm: { state: 'ALLOCATED', busySeconds: 50_000 } } : {}) }) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest());
    await waitForStage(runtime, run.id, 1, 'QUIESCING');

    await cancel(runtime, run.id);
    await run.outcome;

    const report = await buildSessionReport(runtime.store, (await runtime.store.getSession(run.id))!);
    expect(report.counts).toMatchObject({ UPGRADED: 2, FAILED: 4 });
    expect(runtime.simulator.state().nodes[nodeName(3)]!.killedJobs).toBe(0);
  });

  it('refuses to cancel a session that has already completed', async () => {
    runtime = await startTestRuntime({ site: buildSite(2) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest());
    await run.outcome;
    await expect(runtime.store.requestCancel(run.id)).rejects.toMatchObject({ name: 'SessionNotCancellableError' });
  });
});
