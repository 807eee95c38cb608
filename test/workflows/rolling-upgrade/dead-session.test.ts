import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { buildSessionReport } from '../../../control-plane/reports/session-report';
import type { SiteState } from '../../../simulator';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { eventually, startTestRuntime } from '../../support/embedded';

/** A session whose process died mid-step: resumed explicitly, or its nodes taken over once its leases ran out. */

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

/**
 * Every node booted once, drained once (`takenOver`: twice, once by the dead session and once by the
 * taker, which drains it again so that its Slurm reason names the session now at work on it), and
 * each node's recorded status as the site shows it.
 */
async function expectConsistent(runtime: EmbeddedRuntime, upgradeId: string, site: SiteState, count: number, takenOver: readonly string[] = []) {
  const report = await buildSessionReport(runtime.store, (await runtime.store.getSession(upgradeId))!);
  for (let i = 0; i < count; i++) {
    const name = nodeName(i);
    const node = site.nodes[name]!;
    expect({ name, drains: node.drainCount, boots: node.bootCount }).toEqual({ name, drains: takenOver.includes(name) ? 2 : 1, boots: 1 });
    expect({ name, status: report.nodes[name]!.status }).toEqual({ name, status: 'UPGRADED' });
    expect({ name, wlmState: node.wlmState }).toEqual({ name, wlmState: 'IDLE' });
  }
  expect(site.violations).toEqual([]);
  return report;
}

describe('a session whose process died', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('is resumed explicitly ({resumeUpgradeId}) and ends the upgrade: no node drained or booted twice, every status as the site shows', async () => {
    // A job keeps step 1 in QUIESCING for a while.
    runtime = await startTestRuntime({ site: buildSite(6, { node: (i) => (i === 3 ? { wlm: { state: 'ALLOCATED', busySeconds: 500 } } : {}) }) });
    // Polls a minute apart: the job's wait is nine increments, not fifty (each costs real CPU, under load too).
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ pollIntervalSeconds: 60 }));
    await waitForStage(runtime, run.id, 1, 'QUIESCING');
    const rt = runtime;
    await rt.clock.busy(async () => rt.engine.stop(run.executionArn));
    expect((await run.outcome).status).toBe('ABORTED');
    expect(await runtime.store.locks.getLockOwners([nodeName(2), nodeName(3)])).toEqual(
      new Map([
        [nodeName(2), run.id],
        [nodeName(3), run.id],
      ]),
    );

    const resumed = await runtime.run('rollingUpgrade', { resumeUpgradeId: run.id });
    expect(resumed.id).not.toBe(run.id);
    expect((await resumed.outcome).status).toBe('SUCCEEDED');
    const report = await expectConsistent(runtime, run.id, runtime.simulator.state(), 6);
    expect(report.state).toBe('READY');
    expect((await runtime.store.locks.getLockOwners([0, 1, 2, 3, 4, 5].map(nodeName))).size).toBe(0);
  });

  it('loses its nodes once its leases run out: a second session waits, takes them over, and upgrades each node once', async () => {
    runtime = await startTestRuntime({
      site: buildSite(4, { node: (i) => (i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 300 } } : {}) }),
      settings: { lockLeaseSeconds: 600 },
    });
    const dead = await runtime.run('rollingUpgrade', upgradeRequest());
    await waitForStage(runtime, dead.id, 0, 'QUIESCING');
    const rt = runtime;
    await rt.clock.busy(async () => rt.engine.stop(dead.executionArn));
    await dead.outcome;

    // The taker polls a minute apart: its wait for the dead session's leases is ten increments, not
    // a hundred and eighty (every poll runs on virtual time, and each costs real CPU under load).
    const taker = await runtime.run('rollingUpgrade', upgradeRequest({ pollIntervalSeconds: 60 }));
    const outcome = await taker.outcome;
    expect(outcome.status).toBe('SUCCEEDED');
    const messages = await runtime.store.messages.list(taker.id);
    expect(messages).toContainEqual(expect.stringMatching(new RegExp(`Step 1 of \\d+ waits for nodes locked by session ${dead.id}`)));
    // The dead session had drained step 0's nodes; the taker drained them again under its own id.
    const report = await expectConsistent(runtime, taker.id, runtime.simulator.state(), 4, [nodeName(0), nodeName(1)]);
    expect(report.state).toBe('READY');
  });
});

describe("a session waiting for another session's locks", () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('when cancelled, leaves the nodes the other session holds alone (no resume, no fail), and the holder finishes them', async () => {
    // Session A holds n000 and n001 in QUIESCING (n001 runs a job); B wants the same nodes first.
    runtime = await startTestRuntime({ site: buildSite(4, { node: (i) => (i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 400 } } : {}) }) });
    const holder = await runtime.run('rollingUpgrade', upgradeRequest());
    await waitForStage(runtime, holder.id, 0, 'QUIESCING');
    const waiter = await runtime.run('rollingUpgrade', upgradeRequest());
    await eventually(
      runtime,
      async () => {
        const messages = await runtime!.store.messages.list(waiter.id);
        return messages.some((m) => m.includes(`waits for nodes locked by session ${holder.id}`)) || undefined;
      },
      'the second session waiting',
    );
    const rt = runtime;
    await rt.clock.busy(() => rt.store.requestCancel(waiter.id));
    expect((await waiter.outcome).status).toBe('SUCCEEDED');
    // The holder's drained node is still drained: the cancelled session lifted nobody's drain.
    expect(runtime.simulator.state().nodes[nodeName(0)]!.wlmState).toBe('DRAINED');
    const cancelled = await buildSessionReport(runtime.store, (await runtime.store.getSession(waiter.id))!);
    expect(cancelled.state).toBe('DELETED');
    expect(cancelled.counts.FAILED ?? 0).toBe(0);

    expect((await holder.outcome).status).toBe('SUCCEEDED');
    const report = await expectConsistent(runtime, holder.id, runtime.simulator.state(), 4);
    expect(report.state).toBe('READY');
  });

  it("when cancelled after its first step, fails only nodes it could lock; the nodes the other session holds stay the holder's", async () => {
    // B's plan starts with n002, n003 (free), then n000, n001, which A holds in QUIESCING while n001 runs a long job.
    runtime = await startTestRuntime({
      site: buildSite(4, {
        node: (i) => (i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 5000 } } : {}),
        groups: { compute: [0, 1].map(nodeName), other: [2, 3, 0, 1].map(nodeName), upgrading: [], failed: [], upgrading2: [], failed2: [] },
      }),
    });
    const holder = await runtime.run('rollingUpgrade', upgradeRequest({ quiesceTimeoutSeconds: 100_000 }));
    await waitForStage(runtime, holder.id, 0, 'QUIESCING');
    const waiter = await runtime.run('rollingUpgrade', upgradeRequest({ startingLabel: 'other', upgradingLabel: 'upgrading2', failedLabel: 'failed2' }));
    await waitForStage(runtime, waiter.id, 1, 'STARTING');
    await eventually(
      runtime,
      async () => ((await runtime!.store.getSession(waiter.id))?.progress.lockWaitSince !== undefined ? true : undefined),
      'B waiting at step 1',
    );
    const rt = runtime;
    await rt.clock.busy(() => rt.store.requestCancel(waiter.id));
    await waiter.outcome;

    const site = runtime.simulator.state();
    expect(site.nodes[nodeName(0)]!.wlmState).toBe('DRAINED');
    expect(site.nodes[nodeName(1)]!.wlmState).not.toMatch(/FAIL/);
    expect(site.groups.failed2).toEqual([]);
    const cancelled = await buildSessionReport(runtime.store, (await runtime.store.getSession(waiter.id))!);
    expect(cancelled.counts.FAILED ?? 0).toBe(0);
    expect(await runtime.store.messages.list(waiter.id)).toContainEqual(expect.stringMatching(new RegExp(`not ours \\(locked by session ${holder.id}\\)`)));
    expect(await runtime.store.locks.getLockOwners([0, 1].map(nodeName))).toEqual(
      new Map([
        [nodeName(0), holder.id],
        [nodeName(1), holder.id],
      ]),
    );
  });
});
