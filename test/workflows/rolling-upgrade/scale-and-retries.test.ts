import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { simulatedSiteClients } from '../../../local/simulated-site-clients';
import type { WorkflowState } from '../../../core/rolling-upgrade/session';
import { bootStep } from '../../../lambdas/activities/rolling-upgrade/boot-step';
import { startStep } from '../../../lambdas/activities/rolling-upgrade/start-step';
import { defaultSettings } from '../../../lambdas/activities/rolling-upgrade/dependencies';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { eventually, runUpgrade, startTestRuntime } from '../../support/embedded';

describe('rolling upgrade inside the Step Functions quotas', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('continues as new executions past the iteration budget, with the same result', async () => {
    runtime = await startTestRuntime({ site: buildSite(12), settings: { iterationsPerExecution: 8 } });
    const { report, outcome } = await runUpgrade(runtime, upgradeRequest({ upgradeStepSize: 1 }));

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report.counts.UPGRADED).toBe(12);
    const executions = runtime.engine.executions;
    expect(executions.length).toBeGreaterThan(5);
    // 8 iterations of at most 11 events (Wait, Dispatch Stage, a stage Task, Check Progress), plus Open
    // Session, Cancel Only and its Check Progress (9), Count Generation and Continue As New (7), start and end (2).
    for (const e of executions) expect(e.historyEvents).toBeLessThanOrEqual(8 * 11 + 18);
    for (const e of executions) expect(e.largestPayloadBytes).toBeLessThan(1024);
  });
});

describe('a stage increment retried after a crash', () => {
  let runtime: EmbeddedRuntime;
  beforeEach(async () => {
    runtime = await startTestRuntime({ site: buildSite(4) });
  });
  afterEach(() => runtime.close());

  async function openSession(): Promise<WorkflowState> {
    return runtime.handlers.OpenSession({ input: upgradeRequest(), executionId: 'arn:test:exec-1' } as never, {});
  }
  const deps = () => ({ store: runtime.store, site: createSite(runtime), clock: runtime.clock, settings: defaultSettings });

  it('drains no node twice when STARTING ran but its progress was never saved', async () => {
    const state = await openSession();
    const session = (await runtime.store.getSession(state.upgradeId))!;
    // The first attempt did its work and crashed before saving progress...
    await startStep({ session, progress: session.progress, deps: deps(), now: runtime.clock.now(), locks: { due: true, renewedAt: undefined } });
    // ...so the retry runs the same increment again.
    const next = await runtime.handlers.StartStep(state as never, {});

    expect(next.stage).toBe('QUIESCING');
    for (const name of [0, 1].map(nodeName)) expect(runtime.simulator.state().nodes[name]!.drainCount).toBe(1);
  });

  it('boots no node twice when QUIESCED started the boot but crashed before saving', async () => {
    let state = await openSession();
    state = await runtime.handlers.StartStep(state as never, {});
    state = await eventually(
      runtime,
      async () => {
        const next = await runtime.handlers.CheckQuiesce(state as never, {});
        return next.stage === 'QUIESCED' ? next : undefined;
      },
      'the step to quiesce',
    );
    const session = (await runtime.store.getSession(state.upgradeId))!;
    await bootStep({ session, progress: session.progress, deps: deps(), now: runtime.clock.now(), locks: { due: true, renewedAt: undefined } });
    const next = await runtime.handlers.BootStep(state as never, {});

    expect(next.stage).toBe('BOOTING');
    for (const name of [0, 1].map(nodeName)) expect(runtime.simulator.state().nodes[name]!.bootCount).toBe(1);
    expect(runtime.simulator.state().violations).toEqual([]);
  });

  it('does nothing when a duplicate invocation finds the session already moved on', async () => {
    const opened = await openSession();
    const first = await runtime.handlers.StartStep(opened as never, {});
    const duplicate = await runtime.handlers.StartStep(opened as never, {});

    expect(duplicate).toMatchObject({ stage: first.stage, step: first.step });
    expect(runtime.simulator.state().nodes[nodeName(0)]!.drainCount).toBe(1);
  });

  it('opens one session however often Open Session is retried for the same execution', async () => {
    const a = await openSession();
    const b = await openSession();
    expect(b.upgradeId).toBe(a.upgradeId);
    expect(await runtime.store.list()).toHaveLength(1);
  });
});

describe('an increment that fails after saving part of its progress', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('keeps what it saved (the boot request time) and counts the error on top of it', async () => {
    // The boot request time is saved, then creating the boot session fails: the increment fails after saving it.
    runtime = await startTestRuntime({
      site: buildSite(2, { apiFaults: [{ service: 'boot-service', method: 'POST', path: '/sessions', status: 500, count: 1 }] }),
    });
    const rt = runtime;
    let state: WorkflowState = await rt.handlers.OpenSession({ input: upgradeRequest(), executionId: 'arn:test:exec-1' } as never, {});
    state = await rt.handlers.StartStep(state as never, {});
    state = await eventually(
      rt,
      async () => {
        const next = await rt.handlers.CheckQuiesce(state as never, {});
        return next.stage === 'QUIESCED' ? next : undefined;
      },
      'the step to quiesce',
    );
    const failed = await rt.handlers.BootStep(state as never, {});

    expect(failed.stage).toBe('QUIESCED');
    const { progress } = (await rt.store.getSession(state.upgradeId))!;
    expect(progress).toMatchObject({ stage: 'QUIESCED', errorCount: 1, bootRequestedAt: expect.any(Number), bootSessionName: expect.any(String) });
    // The retry finds the boot session by its name: the nodes are booted once, and count as back after that boot.
    const retried = await rt.handlers.BootStep(failed as never, {});
    expect(retried.stage).toBe('BOOTING');
    expect((await rt.store.getSession(state.upgradeId))!.progress.bootRequestedAt).toBe(progress.bootRequestedAt);
    for (const name of [0, 1].map(nodeName)) expect(rt.simulator.state().nodes[name]!.bootCount).toBe(1);
  });
});

/** The same HTTP clients the handlers use, pointed at the simulator. */
function createSite(runtime: EmbeddedRuntime) {
  return simulatedSiteClients(runtime.simulator);
}
