import { eventually, startTestRuntime } from '../../support/embedded';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';

/**
 * A person's resume of a session whose earlier executions had continued as new: the resume's own
 * continue-as-new took the name `<id>-g1` again, met ExecutionAlreadyExists (the retry-safe catch) and
 * ended the chain as if it had continued: the session stayed UPDATING with no execution running it.
 * A resume now starts its chain after the newest generation stored on the session.
 */
it('a stopped window resumed across several continue-as-new runs to its end: every node upgraded and rebooted once', async () => {
  const runtime = await startTestRuntime({ site: buildSite(6), settings: { iterationsPerExecution: 3 } });
  try {
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 1 }));
    await eventually(
      runtime,
      async () => (((await runtime.store.getSession(run.id))?.progress.counts?.upgraded ?? 0) >= 2 ? true : undefined),
      '2 nodes upgraded',
    );
    await runtime.clock.busy(() => runtime.stop(run.id));
    await run.outcome;
    expect((await runtime.store.getSession(run.id))?.state).toBe('STOPPED');
    expect((await runtime.store.getSession(run.id))?.generation).toBeGreaterThan(0);

    const resumed = await runtime.run('rollingUpgrade', { resumeUpgradeId: run.id }, `${run.id}-resume-1`);
    expect(await resumed.outcome).toMatchObject({ status: 'SUCCEEDED' });
    const session = (await runtime.store.getSession(run.id))!;
    expect(session).toMatchObject({ state: 'READY', completed: true, progress: { counts: { upgraded: 6, failed: 0 } } });
    for (let i = 0; i < 6; i++) expect(runtime.simulator.state().nodes[nodeName(i)]).toMatchObject({ bootCount: 1 });
    expect(await runtime.isRunning('upgrade', run.id)).toBe(false);
  } finally {
    await runtime.close();
  }
});
