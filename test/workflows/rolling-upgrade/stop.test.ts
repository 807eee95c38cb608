import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { buildSessionReport } from '../../../control-plane/reports/session-report';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { eventually, startTestRuntime } from '../../support/embedded';
import { deploymentNodeRuns, deploymentSite, groupOf, namedNodes, namesOf, QUICK_POLL } from '../../support/deployment-sites';

/**
 * Stop, as against cancel: nodes in flight (rebooting) finish, nothing new starts, nodes not rebooted
 * yet are left exactly as they were, and the session ends STOPPED; a resume carries it on to its end.
 */

async function waitFor(runtime: EmbeddedRuntime, upgradeId: string, what: string, ok: (s: { step: number; stage: string; inFlight: number }) => boolean) {
  return eventually(
    runtime,
    async () => {
      const session = await runtime.store.getSession(upgradeId);
      if (!session) return undefined;
      const seen = { step: session.progress.step, stage: session.progress.stage, inFlight: session.progress.window?.inFlight?.length ?? 0 };
      return ok(seen) ? session : undefined;
    },
    what,
  );
}

const report = async (runtime: EmbeddedRuntime, id: string) => buildSessionReport(runtime.store, (await runtime.store.getSession(id))!);
/** The report once Open Session has stored the session (right after `run` it may not have yet), else undefined. */
const reportOnceOpen = async (runtime: EmbeddedRuntime, id: string) => {
  const session = await runtime.store.getSession(id);
  return session && buildSessionReport(runtime.store, session);
};

describe('stopping a rolling upgrade', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('lock-step, while a step drains: puts its nodes back, fails nothing, ends STOPPED; a resume starts that step again and completes', async () => {
    // Node 3's job keeps step 1 draining; node 2 is idle and drained by us, node 3 keeps its job.
    runtime = await startTestRuntime({ site: buildSite(6, { node: (i) => (i === 3 ? { wlm: { state: 'ALLOCATED', busySeconds: 2000 } } : {}) }) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest());
    await waitFor(runtime, run.id, 'step 1 QUIESCING', (s) => s.step === 1 && s.stage === 'QUIESCING');
    const stopped = await runtime.clock.busy(() => runtime!.stop(run.id));
    expect(stopped).toEqual({ id: run.id, kind: 'upgrade', state: 'STOPPING', running: true });
    expect((await run.outcome).status).toBe('SUCCEEDED');

    const after = await report(runtime, run.id);
    expect(after).toMatchObject({ state: 'STOPPED', completed: false, progress: { step: 1, stage: 'STOPPED' } });
    expect(after.counts).toEqual({ UPGRADED: 2, FAILED: 0, NOT_STARTED: 4, IN_PROGRESS: 0 });
    const site = runtime.simulator.state();
    expect(site.nodes[nodeName(2)]!.wlmState).toBe('IDLE'); // our drain lifted
    expect(site.nodes[nodeName(3)]!.wlmState).toBe('ALLOCATED'); // its job goes on
    for (let i = 2; i < 6; i++) expect(site.nodes[nodeName(i)]!.bootCount).toBe(0);
    expect(site.groups.failed).toEqual([]);
    expect((await runtime.store.locks.getLockOwners([2, 3].map(nodeName))).size).toBe(0);
    expect(after.messages.at(-1)).toMatch(/^Upgrade Session Stopped/);
    // A cancel request during a stop is still a cancel; a second stop is no error; a stopped session cannot be stopped.
    await expect(runtime.stop(run.id)).rejects.toThrow(/is STOPPED and cannot be stopped/);

    const resumed = await runtime.run('rollingUpgrade', { resumeUpgradeId: run.id });
    await resumed.outcome;
    const done = await report(runtime, run.id);
    expect(done).toMatchObject({ state: 'READY', completed: true });
    expect(done.counts.UPGRADED).toBe(6);
    // The resumed step drained node 3 again and waited for its job: each node booted once in all.
    for (let i = 0; i < 6; i++) expect(runtime.simulator.state().nodes[nodeName(i)]!.bootCount).toBe(1);
    expect(done.makespanSeconds).toBeGreaterThan(0);
  });

  it('lock-step, while a step boots: the step finishes, the next step is not started', async () => {
    runtime = await startTestRuntime({ site: buildSite(6) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest());
    await waitFor(runtime, run.id, 'step 1 BOOTING', (s) => s.step === 1 && s.stage === 'BOOTING');
    await runtime.clock.busy(() => runtime!.stop(run.id));
    await run.outcome;
    const after = await report(runtime, run.id);
    expect(after).toMatchObject({ state: 'STOPPED', progress: { step: 2, stage: 'STOPPED' } });
    expect(after.counts).toMatchObject({ UPGRADED: 4, NOT_STARTED: 2 });
    expect(runtime.simulator.state().nodes[nodeName(4)]!.wlmState).toBe('IDLE');
  });

  it('window: nodes rebooting finish, draining ones are put back, nothing new starts; a resume finishes the plan', async () => {
    // Nodes 0-1 idle (they boot at once), 2-3 busy (they drain for a long time): a window of 4.
    runtime = await startTestRuntime({ site: buildSite(8, { node: (i) => (i === 2 || i === 3 ? { wlm: { state: 'ALLOCATED', busySeconds: 2000 } } : {}) }) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 4 }));
    await eventually(
      runtime,
      async () => {
        const nodes = await runtime!.store.listNodes(run.id);
        return nodes.some((n) => n.phase === 'BOOTING') && nodes.filter((n) => n.phase === 'DRAINING').length === 2 ? true : undefined;
      },
      'two booting and two draining',
    );
    await runtime.clock.busy(() => runtime!.stop(run.id));
    await run.outcome;

    const after = await report(runtime, run.id);
    expect(after).toMatchObject({ state: 'STOPPED', completed: false, progress: { stage: 'STOPPED' } });
    expect(after.counts).toEqual({ UPGRADED: 2, FAILED: 0, NOT_STARTED: 6, IN_PROGRESS: 0 });
    const site = runtime.simulator.state();
    expect([2, 3].map((i) => site.nodes[nodeName(i)]!.wlmState)).toEqual(['ALLOCATED', 'ALLOCATED']);
    for (let i = 2; i < 8; i++) expect(site.nodes[nodeName(i)]!.bootCount).toBe(0);

    await (await runtime.run('rollingUpgrade', { resumeUpgradeId: run.id })).outcome;
    const done = await report(runtime, run.id);
    expect(done).toMatchObject({ state: 'READY', completed: true, counts: { UPGRADED: 8 } });
  });

  it('the console path: {"stopUpgradeId"} writes the stop request and ends at once', async () => {
    runtime = await startTestRuntime({ site: buildSite(4, { node: (i) => (i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 50_000 } } : {}) }) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest());
    await waitFor(runtime, run.id, 'QUIESCING', (s) => s.stage === 'QUIESCING');
    const console = await runtime.run('rollingUpgrade', { stopUpgradeId: run.id });
    expect(await console.outcome).toMatchObject({ status: 'SUCCEEDED', output: { stopRequested: { id: run.id, kind: 'upgrade', state: 'STOPPING' } } });
    await run.outcome;
    expect((await runtime.store.getSession(run.id))!.state).toBe('STOPPED');
  });

  it('lock-step honours maxFailed: the step in flight finishes, no step starts after it, state HALTED', async () => {
    runtime = await startTestRuntime({ site: buildSite(6, { node: (i) => (i === 0 ? { faults: { boot: 'fail' } } : {}) }) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ maxFailed: 0 }));
    await run.outcome;
    const after = await report(runtime, run.id);
    expect(after).toMatchObject({ state: 'HALTED', completed: false, haltedReason: '1 failed nodes exceed maxFailed (0)' });
    expect(after.counts).toEqual({ UPGRADED: 1, FAILED: 1, NOT_STARTED: 4, IN_PROGRESS: 0 });
    for (let i = 2; i < 6; i++) expect(runtime.simulator.state().nodes[nodeName(i)]!.bootCount).toBe(0);
  });
});

describe('stopping a group deployment', () => {
  it('lets the batch in flight finish, starts nothing after it, ends STOPPED; a resume finishes it', async () => {
    const A = namedNodes('a', 3);
    const runtime = await startTestRuntime({ site: deploymentSite(A) });
    try {
      const run = await runtime.run('groupDeployment', {
        strategy: { groups: [groupOf('a', namesOf(A), { critical: true, strategy: { type: 'one_by_one' } })] },
        ...QUICK_POLL,
      });
      await eventually(runtime, async () => (deploymentNodeRuns(runtime, run.id).length >= 1 ? true : undefined), 'a node run');
      expect(await runtime.clock.busy(() => runtime.stop(run.id))).toEqual({ id: run.id, kind: 'deployment', state: 'STOPPING', running: true });
      const outcome = await run.outcome;
      expect(outcome.output).toMatchObject({ status: 'STOPPED', cause: expect.stringMatching(/^Deployment stopped: 0 of 1 group\(s\) finished/) });
      expect((await runtime.deployments.getDeployment(run.id))!.status).toBe('STOPPED');
      const before = deploymentNodeRuns(runtime, run.id).length;

      const resumed = await runtime.run('groupDeployment', { resumeDeploymentId: run.id });
      expect((await resumed.outcome).output).toMatchObject({ status: 'SUCCEEDED' });
      expect((await runtime.deployments.getDeployment(run.id))!.status).toBe('SUCCEEDED');
      expect(deploymentNodeRuns(runtime, run.id).length).toBeGreaterThan(before);
    } finally {
      await runtime.close();
    }
  });
});

describe("the live view: each node's phase and since when, from its record", () => {
  it('shows quiet, booting and back with the instants they began; the ETA and timed messages; out-of-service intervals', async () => {
    // Node 1's job keeps step 0 draining while node 0 is already quiet.
    const runtime = await startTestRuntime({ site: buildSite(4, { node: (i) => (i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 300 } } : {}) }) });
    try {
      const run = await runtime.run('rollingUpgrade', upgradeRequest());
      const quiet = await eventually(
        runtime,
        async () => {
          const r = await reportOnceOpen(runtime, run.id);
          return r?.nodes[nodeName(0)]?.phase === 'quiet' ? r : undefined;
        },
        'node 0 quiet',
      );
      expect(quiet.nodes[nodeName(1)]).toMatchObject({ status: 'IN_PROGRESS', phase: 'draining' });
      expect(quiet.nodes[nodeName(2)]).toEqual({ status: 'NOT_STARTED', phase: 'waiting' });
      expect(Date.parse(quiet.nodes[nodeName(0)]!.since!)).toBeGreaterThanOrEqual(Date.parse(quiet.createdAt));
      expect(quiet.timeBase).toBe('simulated');

      const booting = await eventually(
        runtime,
        async () => {
          const r = await report(runtime, run.id);
          return r.nodes[nodeName(0)]?.phase === 'booting' ? r : undefined;
        },
        'node 0 booting',
      );
      // The step booted once both were quiet: node 1's job ended 300 s in.
      expect(Date.parse(booting.nodes[nodeName(0)]!.since!) - Date.parse(booting.createdAt)).toBeGreaterThanOrEqual(300_000);

      await run.outcome;
      const done = await report(runtime, run.id);
      expect(done.phases).toEqual({ back: 4 });
      for (const node of Object.values(done.nodes)) {
        expect(node.phase).toBe('back');
        expect(Date.parse(node.outOfService!.to!)).toBeGreaterThan(Date.parse(node.outOfService!.from));
      }
      expect(done.messageLog.at(-1)).toEqual({ at: expect.stringMatching(/^2026-/), text: 'Upgrade Session Completed' });
      expect(done.estimate).toBeUndefined();
      // While it ran, the ETA was on the session item once the first step ended.
      expect(done.makespanSeconds).toBeGreaterThan(300);
    } finally {
      await runtime.close();
    }
  });
});
