import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { ClockStalledError } from '../../../time/virtual-clock';
import { buildSessionReport } from '../../../control-plane/reports/session-report';
import { peakOutOfService } from '../../../simulator/out-of-service';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { eventually, runUpgrade, startTestRuntime } from '../../support/embedded';

/** How many times the rolling-upgrade executions of the runtime entered a state (every execution of the chain). */
function stateEntries(runtime: EmbeddedRuntime, state: string): number {
  return runtime.engine
    .listExecutions(runtime.stateMachineArns.RollingUpgrade)
    .reduce((sum, e) => sum + e.history.filter((h) => h.type.endsWith('StateEntered') && h.stateName === state).length, 0);
}

/** Most nodes out of service at one instant. */
const peakOf = (nodes: Record<string, { outOfService: [number, number | null][] }>) => peakOutOfService(Object.values(nodes).flatMap((n) => n.outOfService));

describe('rolling upgrade in mode window', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('upgrades every node, never more than maxUnavailable out of service, each rebooted once in a boot limited to its own batch', async () => {
    // Node 0 runs a long job: lock-step would hold its whole step back; the window goes on around it.
    runtime = await startTestRuntime({ site: buildSite(9, { node: (i) => (i === 0 ? { wlm: { state: 'ALLOCATED', busySeconds: 3000 } } : {}) }) });
    const { outcome, report } = await runUpgrade(runtime, upgradeRequest({ mode: 'window', maxUnavailable: 3, pollIntervalSeconds: 30 }));

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report.state).toBe('READY');
    expect(report.completed).toBe(true);
    expect(report.counts).toMatchObject({ UPGRADED: 9, FAILED: 0 });
    const site = runtime.simulator.state();
    for (let i = 0; i < 9; i++) expect(site.nodes[nodeName(i)]).toMatchObject({ bootCount: 1, drainCount: 1, wlmState: 'IDLE', killedJobs: 0 });
    expect(peakOf(site.nodes)).toBeLessThanOrEqual(3);
    expect(site.violations).toEqual([]);
    expect(site.groups.failed).toEqual([]);
    // The 8 idle nodes are done long before node 0's job ends (3,000 s): the window did not wait for it.
    const backAt = (i: number) => site.nodes[nodeName(i)]!.outOfService.at(-1)![1]!;
    for (let i = 1; i < 9; i++) expect(backAt(i)).toBeLessThan(3000);
    expect(backAt(0)).toBeGreaterThanOrEqual(3000);
    expect(report.messages.at(-1)).toBe('Upgrade Session Completed');
    expect((await runtime.store.locks.getLockOwners(Array.from({ length: 9 }, (_, i) => nodeName(i)))).size).toBe(0);
  });

  it('fails nodes with the lock-step reasons and still completes', async () => {
    runtime = await startTestRuntime({
      site: buildSite(5, {
        node: (i) => (i === 1 ? { faults: { boot: 'fail' } } : i === 3 ? { faults: { returnToService: 'never' } } : {}),
      }),
    });
    const { report } = await runUpgrade(runtime, upgradeRequest({ mode: 'window', maxUnavailable: 2, wlmReturnTimeoutSeconds: 300 }));

    expect(report.completed).toBe(true);
    expect(report.nodes[nodeName(1)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-boot-session-failed' });
    expect(report.nodes[nodeName(3)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-time-out-wlm-waiting' });
    expect(report.counts).toMatchObject({ UPGRADED: 3, FAILED: 2 });
    const site = runtime.simulator.state();
    expect([...(site.groups.failed ?? [])].sort()).toEqual([nodeName(1), nodeName(3)]);
    // CRUS's reason first, then the session that failed it (core/site/node-claims.ts).
    expect(site.nodes[nodeName(3)]!.wlmReason).toMatch(/^upgrading-time-out-wlm-waiting [0-9a-f-]{36}$/);
  });

  it('halts once more nodes failed than maxFailed: no new node starts, the session ends HALTED with the reason', async () => {
    runtime = await startTestRuntime({ site: buildSite(5, { node: (i) => (i === 0 ? { faults: { boot: 'fail' } } : {}) }) });
    const { outcome, report } = await runUpgrade(runtime, upgradeRequest({ mode: 'window', maxUnavailable: 1, maxFailed: 0 }));

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report.state).toBe('HALTED');
    expect(report.completed).toBe(false);
    expect(report.haltedReason).toBe('1 failed nodes exceed maxFailed (0)');
    expect(report.nodes[nodeName(0)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-boot-session-failed' });
    for (let i = 1; i < 5; i++) {
      expect(report.nodes[nodeName(i)]).toMatchObject({ status: 'NOT_STARTED', reason: 'left alone: halted: 1 failed nodes exceed maxFailed (0)' });
      expect(runtime.simulator.state().nodes[nodeName(i)]).toMatchObject({ drainCount: 0, bootCount: 0 });
    }
    expect(report.messages.at(-1)).toBe('Upgrade Session Halted: 1 failed nodes exceed maxFailed (0)');
  });

  it('haltOnOutsideFailures: halts when a node outside the plan goes DOWN or FAIL during the run, not for one down before it', async () => {
    const inPlan = [0, 1, 2, 3].map(nodeName);
    runtime = await startTestRuntime({
      site: buildSite(6, {
        node: (i) => (i === 5 ? { wlm: { state: 'DOWN', reason: 'dead before the run' } } : {}),
        groups: { compute: inPlan, upgrading: [], failed: [] },
      }),
    });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 1, haltOnOutsideFailures: true }));
    await eventually(
      runtime,
      async () => {
        const nodes = await runtime!.store.listNodes(run.id);
        return nodes.some((n) => n.status === 'UPGRADED') ? nodes : undefined;
      },
      'a first node upgraded',
    );
    await runtime.clock.busy(async () => runtime!.simulator.simulator.workloadManager.fail(nodeName(4), 'bad psu'));
    await run.outcome;
    const report = await buildSessionReport(runtime.store, (await runtime.store.getSession(run.id))!);
    expect(report.state).toBe('HALTED');
    expect(report.haltedReason).toBe(`nodes outside the plan went DOWN or FAIL: ${nodeName(4)}`);
    expect(report.counts.UPGRADED).toBeGreaterThanOrEqual(1);
    expect(report.counts.UPGRADED).toBeLessThan(4);
  });

  it('parks on a task token for an approval and for a pause: nothing polls; approve (also while paused) and resume wake it', async () => {
    runtime = await startTestRuntime({ site: buildSite(4) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 1, batches: [1], approval: 'each-batch' }));
    const session = () => runtime!.store.getSession(run.id);
    const report = async () => runtime!.clock.busy(async () => buildSessionReport(runtime!.store, (await session())!));

    // Paused while batch 1's node is in flight: it finishes, then the window waits for the pause and for batch 2's approval.
    await eventually(
      runtime,
      async () => ((await runtime!.store.listNodes(run.id)).some((n) => n.status === 'IN_PROGRESS') ? true : undefined),
      'batch 1 in flight',
    );
    await runtime.clock.busy(() => runtime!.gate(run.id, 'pause'));
    await eventually(
      runtime,
      async () => ((await session())?.progress.window?.waiting === 'paused' && runtime!.engine.tokens.waiting === 1 ? true : undefined),
      'parked, paused',
    );
    expect(await report()).toMatchObject({ paused: true, waiting: 'paused', awaitingApprovalOfBatch: 2, counts: { UPGRADED: 1, NOT_STARTED: 3 } });

    // Parked: nothing runs and nothing sleeps (no Wait, no poll), so virtual time has nowhere to go; the execution is not
    // ended as stalled (it waits for the outside), and its token is on the session item.
    const parkedAt = runtime.clock.now();
    const looks = stateEntries(runtime, 'Advance Window');
    await expect(runtime.clock.settled()).rejects.toThrow(ClockStalledError);
    expect(runtime.clock.now()).toBe(parkedAt);
    expect(stateEntries(runtime, 'Advance Window')).toBe(looks);
    expect(stateEntries(runtime, 'Wait For Operator')).toBe(1);
    expect(runtime.engine.tokens.waiting).toBe(1);
    expect((await runtime.clock.busy(() => session()))?.operator?.taskToken).toEqual(expect.any(String));

    // Approved while paused (the increment saw the pause): kept; it wakes, sees the pause, parks again; nothing starts.
    expect(await runtime.clock.busy(() => runtime!.gate(run.id, 'approve'))).toMatchObject({ batch: 2, running: true });
    await eventually(runtime, async () => (stateEntries(runtime!, 'Wait For Operator') === 2 ? true : undefined), 'parked again');
    expect(await report()).toMatchObject({ paused: true, counts: { UPGRADED: 1, NOT_STARTED: 3 } });
    expect((await report()).awaitingApprovalOfBatch).toBeUndefined();

    await runtime.clock.busy(() => runtime!.gate(run.id, 'unpause'));
    expect((await run.outcome).status).toBe('SUCCEEDED');
    expect(await report()).toMatchObject({ state: 'READY', counts: { UPGRADED: 4 } });
  });

  it('wakes a session parked for an approval on cancel: the deletion rules run', async () => {
    runtime = await startTestRuntime({ site: buildSite(3) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 1, batches: [1], approval: 'each-batch' }));
    await eventually(
      runtime,
      async () => ((await runtime!.store.getSession(run.id))?.progress.window?.awaitingApproval === 1 ? true : undefined),
      'the wait for batch 2',
    );
    await eventually(runtime, async () => (runtime!.engine.tokens.waiting === 1 ? true : undefined), 'parked');
    await runtime.clock.busy(() => runtime!.cancel(run.id));
    expect((await run.outcome).status).toBe('SUCCEEDED');
    const cancelled = await buildSessionReport(runtime.store, (await runtime.store.getSession(run.id))!);
    // The nodes never started are left alone: not started, not failed.
    expect(cancelled).toMatchObject({ state: 'DELETED', counts: { UPGRADED: 1, FAILED: 0, NOT_STARTED: 2 } });
  });

  it('reserveSlots: a cancelled session leaves no reservation behind', async () => {
    runtime = await startTestRuntime({ site: buildSite(6) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 1, order: 'idle-first', reserveSlots: true }));
    const held = () => runtime!.simulator.simulator.workloadManager.listReservations();
    await eventually(runtime, async () => (held().length > 0 ? true : undefined), 'the slots held');
    expect(held().every((r) => r.name.startsWith(`rollout-${run.id}-`) && r.flags.includes('MAINT'))).toBe(true);
    await runtime.clock.busy(() => runtime!.cancel(run.id));
    expect((await run.outcome).status).toBe('SUCCEEDED');
    expect((await runtime.store.getSession(run.id))?.state).toBe('DELETED');
    expect(held()).toEqual([]);
  });

  it('refuses an approval when the session waits for none, naming why', async () => {
    runtime = await startTestRuntime({ site: buildSite(2) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 2 }));
    await run.outcome;
    await expect(runtime.gate(run.id, 'approve')).rejects.toThrow(`cannot approve session ${run.id}: the session is READY`);
  });

  it('runs the first batch alone, bakes, then opens the window for the rest', async () => {
    runtime = await startTestRuntime({ site: buildSite(4) });
    const { report } = await runUpgrade(runtime, upgradeRequest({ mode: 'window', maxUnavailable: 3, batches: [1], bakeSeconds: 600 }));

    expect(report.counts).toMatchObject({ UPGRADED: 4 });
    const site = runtime.simulator.state();
    const [canaryStart, canaryEnd] = site.nodes[nodeName(0)]!.outOfService[0]!;
    for (let i = 1; i < 4; i++) {
      const [start] = site.nodes[nodeName(i)]!.outOfService[0]!;
      expect(start).toBeGreaterThanOrEqual(canaryEnd! + 600);
    }
    expect(canaryStart).toBeLessThan(canaryEnd!);
  });

  it.each([1, 6])(
    'stays inside the quotas at maxUnavailable %i: continues as new past the iteration budget, small payloads, bounded history',
    async (maxUnavailable) => {
      runtime = await startTestRuntime({ site: buildSite(12), settings: { iterationsPerExecution: 8 } });
      const { report, outcome } = await runUpgrade(runtime, upgradeRequest({ mode: 'window', maxUnavailable }));

      expect(outcome.status).toBe('SUCCEEDED');
      expect(report.counts.UPGRADED).toBe(12);
      const executions = runtime.engine.executions;
      expect(executions.length).toBeGreaterThan(2);
      // The same bound as lock-step: an iteration costs the same events whatever the stage.
      for (const e of executions) expect(e.historyEvents).toBeLessThanOrEqual(8 * 11 + 18);
      for (const e of executions) expect(e.largestPayloadBytes).toBeLessThan(1024);
      for (let i = 0; i < 12; i++) expect(runtime.simulator.state().nodes[nodeName(i)]).toMatchObject({ bootCount: 1, drainCount: 1 });
    },
  );

  it('fails a node still busy at the quiesce timeout', async () => {
    runtime = await startTestRuntime({ site: buildSite(3, { node: (i) => (i === 2 ? { wlm: { state: 'ALLOCATED', busySeconds: 0 } } : {}) }) });
    const { report } = await runUpgrade(runtime, upgradeRequest({ mode: 'window', maxUnavailable: 2, quiesceTimeoutSeconds: 600, pollIntervalSeconds: 60 }));

    expect(report.nodes[nodeName(2)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-time-out-quiescing' });
    expect(report.counts).toMatchObject({ UPGRADED: 2, FAILED: 1 });
  });

  it('leaves a node held by another session alone until its lock is free', async () => {
    runtime = await startTestRuntime({ site: buildSite(3) });
    await runtime.store.locks.tryLockNodes('someone-else', [nodeName(1)]);
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 3 }));
    await eventually(
      runtime,
      async () => {
        const nodes = await runtime!.store.listNodes(run.id);
        return nodes.filter((n) => n.status === 'UPGRADED').length === 2 ? nodes : undefined;
      },
      'the two free nodes upgraded',
    );
    expect(runtime.simulator.state().nodes[nodeName(1)]!.drainCount).toBe(0);
    await runtime.clock.busy(() => runtime!.store.locks.releaseNodeLocks('someone-else', [nodeName(1)]));
    const outcome = await run.outcome;
    expect(outcome.status).toBe('SUCCEEDED');
    const report = await buildSessionReport(runtime.store, (await runtime.store.getSession(run.id))!);
    expect(report.counts).toMatchObject({ UPGRADED: 3 });
  });

  it('on cancel: lifts our drain from nodes not booted yet, lets booting nodes finish, leaves the rest alone (not started, not failed)', async () => {
    // Node 0 boots slowly (hang until the long boot timeout is not reached: it boots in 60 s); node 1 runs a long job.
    runtime = await startTestRuntime({ site: buildSite(6, { node: (i) => (i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 50_000 } } : {}) }) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 2 }));
    await eventually(
      runtime,
      async () => {
        const nodes = await runtime!.store.listNodes(run.id);
        return nodes.some((n) => n.name === nodeName(0) && n.phase === 'BOOTING') ? nodes : undefined;
      },
      'node 0 booting',
    );
    await runtime.clock.busy(() => runtime!.store.requestCancel(run.id));
    const outcome = await run.outcome;

    expect(outcome.status).toBe('SUCCEEDED');
    const report = await buildSessionReport(runtime.store, (await runtime.store.getSession(run.id))!);
    expect(report.state).toBe('DELETED');
    expect(report.nodes[nodeName(0)]!.status).toBe('UPGRADED');
    for (let i = 1; i < 6; i++)
      expect(report.nodes[nodeName(i)]).toMatchObject({ status: 'NOT_STARTED', reason: 'left alone: upgrade-session-deleted-before-completion' });
    const site = runtime.simulator.state();
    expect(site.nodes[nodeName(1)]!.wlmState).toBe('ALLOCATED'); // our drain lifted, its job undisturbed
    for (let i = 1; i < 6; i++) expect(site.nodes[nodeName(i)]!.bootCount).toBe(0);
    expect(site.groups.failed).toEqual([]);
    expect((await runtime.store.locks.getLockOwners(Array.from({ length: 6 }, (_, i) => nodeName(i)))).size).toBe(0);
    // Counted as the records say, the delete sequence's chunks included.
    expect((await runtime.store.getSession(run.id))!.progress.counts).toEqual({ upgraded: 1, failed: 0 });
  });
});
