import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { simulatedSiteClients } from '../../../local/simulated-site-clients';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { sessionKey } from '../../../adapters/dynamodb/table-design';
import { parseRelayProgram } from '../../../core/site/site-event';
import type { RunningSiteSimulator } from '../../../simulator';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { eventually, runUpgrade, startTestRuntime } from '../../support/embedded';
import { simulatedSiteTriggers } from '../../../local/simulated-site-triggers';
import { profileConnectors, siteEventConnectors } from '../../support/ssm-connectors';
import { loadSiteFile, siteProfileFor } from '../../../simulator';
import type { SiteTriggers } from '../../../ports/site';

/**
 * Waits resumed by the site's events (issue 29): with the workload manager's triggers armed, the session sets one
 * permanent strigger trigger per event on its nodes, parks in `Wait For Site Event` instead of polling, and is woken
 * by each firing the relay delivers (here: the simulated slurmctld's firings, delivered in process as the relay
 * would); its backstop poll catches lost firings; its triggers are gone from `strigger --get` whenever it ends.
 */

const POLL = 30;
/** Node 1 runs a job for 200 s: the quiesce wait is long, and ends with a `drained` firing. */
const site = (count: number) =>
  buildSite(count, { timing: { bootSeconds: 120, returnSeconds: 20 }, node: (i) => (i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 200 } } : {}) });

interface Armed {
  runtime: EmbeddedRuntime;
  triggers: SiteTriggers & { armCalls?: number };
}

/**
 * A runtime whose site's triggers are armed: `model` sets them straight on the simulated slurmctld under the
 * default HTTP connectors (slurmrestd, BOS); `ssm` is the scontrol + slurm-reboot site of `rollout simulate
 * --transport ssm` with siteEvents, its triggers set by strigger on the head node (StriggerTriggers). The runtime
 * delivers the simulated slurmctld's firings itself, as the relay would (local/simulated-trigger-relay.ts).
 */
async function startArmed(count: number, options: { backstopSeconds?: number; connectors?: 'model' | 'ssm'; lockLeaseSeconds?: number } = {}): Promise<Armed> {
  let triggers: Armed['triggers'] | undefined;
  const runtime = await startTestRuntime({
    site: site(count),
    ...(options.lockLeaseSeconds ? { settings: { lockLeaseSeconds: options.lockLeaseSeconds } } : {}),
    connectors: async (simulator: RunningSiteSimulator, deps) => {
      if (options.connectors === 'ssm') {
        const clients = await siteEventConnectors(options.backstopSeconds)(simulator, deps);
        triggers = clients.workloadManager.triggers!;
        return clients;
      }
      const clients = simulatedSiteClients(simulator);
      triggers = simulatedSiteTriggers(simulator.simulator.workloadManager.triggers, options.backstopSeconds);
      Object.assign(clients.workloadManager, { triggers });
      return clients;
    },
  });
  return { runtime, triggers: triggers! };
}

/** The firings delivered (recorded): `event node,node`. */
async function delivered(runtime: EmbeddedRuntime): Promise<string[]> {
  return (await runtime.siteEvents.list()).map((event) => `${event.event} ${event.nodes.join(',')}`);
}

/** The triggers a session left in the simulated slurmctld (`strigger --get`). */
function triggersOf(runtime: EmbeddedRuntime, upgradeId: string) {
  return runtime.simulator.simulator.workloadManager.triggers.list().filter((t) => parseRelayProgram(t.program)?.session === upgradeId);
}

/**
 * Starts a rolling upgrade of six nodes in steps of 2 and waits until its session is parked for the site while step 1
 * drains (node 1's job holds the step for 200 s): the run and the parked session.
 */
async function startParked(runtime: EmbeddedRuntime) {
  const run = await runtime.run('rollingUpgrade', upgradeRequest({ upgradeStepSize: 2, pollIntervalSeconds: POLL }));
  const parked = await eventually(
    runtime,
    async () => {
      const session = await runtime.store.getSession(run.id);
      return session?.siteWaitToken && session.progress.step === 0 && session.progress.stage === 'QUIESCING' ? session : undefined;
    },
    'the session parked for the site while step 1 drains',
  );
  return { run, parked };
}

describe('waits resumed by the site events (Slurm triggers through the relay)', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('lock-step: parks instead of polling, woken by drained and up firings; every node upgraded; triggers cleared at the end', async () => {
    const polled = await startTestRuntime({ site: site(8) });
    const polledStart = polled.clock.now();
    const before = await runUpgrade(polled, upgradeRequest({ upgradeStepSize: 4, pollIntervalSeconds: POLL }));
    const polledEnd = polled.clock.now();
    await polled.close();

    const armed = await startArmed(8);
    runtime = armed.runtime;
    const started = runtime.clock.now();
    const after = await runUpgrade(runtime, upgradeRequest({ upgradeStepSize: 4, pollIntervalSeconds: POLL }));
    expect(after.outcome.status).toBe('SUCCEEDED');
    expect(after.report.counts).toMatchObject({ UPGRADED: 8, FAILED: 0 });
    const messages = after.report.messages;
    expect(messages.some((m) => /^Site triggers set \(strigger .*drained, up, down on 8 node\(s\)\).*backstop poll every 300 s/.test(m))).toBe(true);
    expect(messages).toContain('Site triggers cleared (3)');
    expect(triggersOf(runtime, after.upgradeId)).toEqual([]);
    expect(armed.triggers.armCalls).toBe(1);
    // The firings that woke it: node 1's drain once its job ended, the nodes back after their boot.
    expect((await delivered(runtime)).some((d) => d.startsWith('drained') && d.includes(nodeName(1)))).toBe(true);
    // Fewer state transitions than polling every 30 s (BOS boots: the boot and return waits stay polls), and no
    // slower than one trigger pass (16 s) per wait.
    expect(after.outcome.figures.stateTransitions).toBeLessThan(before.outcome.figures.stateTransitions * 0.9);
    const state = runtime.simulator.state();
    for (let i = 0; i < 8; i++) expect(state.nodes[nodeName(i)]).toMatchObject({ bootCount: 1, wlmState: 'IDLE' });
    expect(state.violations).toEqual([]);
    expect(runtime.clock.now() - started).toBeLessThanOrEqual(polledEnd - polledStart + 16_000);
  }, 120_000);

  it('firings lost (a dead relay): the backstop poll still finishes the run, every timeout holds', async () => {
    const armed = await startArmed(4, { backstopSeconds: 60 });
    runtime = armed.runtime;
    runtime.simulator.simulator.workloadManager.triggers.faults.loseFirings = 1_000_000;
    const after = await runUpgrade(runtime, upgradeRequest({ upgradeStepSize: 4, pollIntervalSeconds: POLL }));
    expect(after.outcome.status).toBe('SUCCEEDED');
    expect(after.report.counts).toMatchObject({ UPGRADED: 4, FAILED: 0 });
    expect(await delivered(runtime)).toEqual([]);
    expect(triggersOf(runtime, after.upgradeId)).toEqual([]);
  }, 120_000);

  it('a backstop longer than the locks’ lease: each park ends by half the lease, the heartbeat keeps the locks, no node is lost', async () => {
    // Lease 120 s (4 polls), backstop 600 s, every firing lost: parked 600 s, the locks would run out while parked.
    const armed = await startArmed(4, { backstopSeconds: 600, lockLeaseSeconds: 120 });
    runtime = armed.runtime;
    runtime.simulator.simulator.workloadManager.triggers.faults.loseFirings = 1_000_000;
    const after = await runUpgrade(runtime, upgradeRequest({ upgradeStepSize: 4, pollIntervalSeconds: POLL }));
    expect(after.outcome.status).toBe('SUCCEEDED');
    expect(after.report.counts).toMatchObject({ UPGRADED: 4, FAILED: 0 });
    const parks = runtime.engine.listExecutions(runtime.stateMachineArns.RollingUpgrade).flatMap((execution) =>
      execution.history.flatMap((entry, i) => {
        if (entry.type !== 'TaskStateEntered' || entry.stateName !== 'Wait For Site Event') return [];
        const exited = execution.history.slice(i + 1).find((later) => later.type === 'TaskStateExited' && later.stateName === 'Wait For Site Event');
        return exited ? [(exited.timestamp - entry.timestamp) / 1000] : [];
      }),
    );
    expect(parks.length).toBeGreaterThan(0);
    expect(Math.max(...parks)).toBe(60);
    expect(after.report.messages.filter((m) => /lock lost|not ours/.test(m))).toEqual([]);
  }, 120_000);

  it('scontrol and slurm-reboot over SSM: strigger sets the triggers; the boot and the return are resumed by up firings too', async () => {
    const polled = await startTestRuntime({ site: site(8), connectors: profileConnectors((urls) => siteProfileFor(urls, 'ssm', 1)) });
    const before = await runUpgrade(polled, upgradeRequest({ upgradeStepSize: 4, pollIntervalSeconds: POLL }));
    const polledSeconds = (polled.clock.now() - polled.clock.startAt) / 1000;
    await polled.close();
    const armed = await startArmed(8, { connectors: 'ssm' });
    runtime = armed.runtime;
    const after = await runUpgrade(runtime, upgradeRequest({ upgradeStepSize: 4, pollIntervalSeconds: POLL }));
    expect(after.outcome.status).toBe('SUCCEEDED');
    expect(after.report.counts).toMatchObject({ UPGRADED: 8, FAILED: 0 });
    expect((await delivered(runtime)).filter((d) => d.startsWith('up'))).not.toEqual([]);
    expect(after.report.messages).toContain('Site triggers cleared (3)');
    expect(triggersOf(runtime, after.upgradeId)).toEqual([]);
    // Every command strigger ran on the head node: one --get and three --set to arm, one --get and three --clear at the end.
    const striggers = runtime.simulator.simulator.headNode.commandLog.filter((c) => c.includes('strigger'));
    expect(striggers.filter((c) => c.includes("'--set'"))).toHaveLength(3);
    expect(striggers.filter((c) => c.includes("'--clear'"))).toHaveLength(3);
    console.log(
      `transitions ${before.outcome.figures.stateTransitions} -> ${after.outcome.figures.stateTransitions}, invocations ${before.outcome.figures.lambdaInvocations} -> ${after.outcome.figures.lambdaInvocations}, makespan ${polledSeconds} s -> ${(runtime.clock.now() - runtime.clock.startAt) / 1000} s`,
    );
    expect(after.outcome.figures.stateTransitions).toBeLessThan(before.outcome.figures.stateTransitions * 0.6);
    expect((runtime.clock.now() - runtime.clock.startAt) / 1000).toBeLessThan(polledSeconds);
  }, 180_000);

  it('window, cap 2, over SSM: nodes in flight are waited for by their firings (never the backstop); every node upgraded once', async () => {
    const window = upgradeRequest({ mode: 'window', maxUnavailable: 2, pollIntervalSeconds: POLL });
    const polled = await startTestRuntime({ site: site(6), connectors: profileConnectors((urls) => siteProfileFor(urls, 'ssm', 1)) });
    const before = await runUpgrade(polled, window);
    const polledSeconds = (polled.clock.now() - polled.clock.startAt) / 1000;
    await polled.close();
    const armed = await startArmed(6, { connectors: 'ssm' });
    runtime = armed.runtime;
    const after = await runUpgrade(runtime, window);
    const armedSeconds = (runtime.clock.now() - runtime.clock.startAt) / 1000;
    console.log(
      `window: transitions ${before.outcome.figures.stateTransitions} -> ${after.outcome.figures.stateTransitions}, makespan ${polledSeconds} s -> ${armedSeconds} s`,
    );
    // A node is seen back within a trigger pass of its registering (not a poll), and no wait runs to the backstop.
    expect(armedSeconds).toBeLessThan(polledSeconds);
    // The window's increments mostly chain (one phase per node each): the waits it saves are fewer than lock-step's.
    expect(after.outcome.figures.stateTransitions).toBeLessThan(before.outcome.figures.stateTransitions * 0.85);
    expect(after.outcome.status).toBe('SUCCEEDED');
    expect(after.report.counts).toMatchObject({ UPGRADED: 6, FAILED: 0 });
    expect((await delivered(runtime)).filter((d) => d.startsWith('up'))).not.toEqual([]);
    expect(triggersOf(runtime, after.upgradeId)).toEqual([]);
    const state = runtime.simulator.state();
    for (let i = 0; i < 6; i++) expect(state.nodes[nodeName(i)]).toMatchObject({ bootCount: 1 });
  }, 180_000);

  it('an execution that fails clears the triggers before it ends (Release Site Triggers), its session record gone or not', async () => {
    runtime = (await startArmed(6)).runtime;
    const { run } = await startParked(runtime);
    expect(triggersOf(runtime, run.id)).toHaveLength(3);
    // The session's record removed under the running workflow: its next increment fails with SessionNotFound.
    await runtime.clock.busy(async () => {
      await runtime!.dynamoDb.client.send(new DeleteCommand({ TableName: runtime!.dynamoDb.tableName, Key: sessionKey(run.id) }));
      await runtime!.wakeForSiteEvent(run.id);
    });
    const outcome = await run.outcome;
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'SessionNotFoundError' });
    expect(triggersOf(runtime, run.id)).toEqual([]);
  }, 120_000);

  it("the embedded default with slurm.siteEvents in the site file (a CSM site: Slurm's nid names): strigger on the simulated head node, on Slurm's names", async () => {
    const csm = await loadSiteFile('examples/sites/cray-csm-64.yaml');
    runtime = await startTestRuntime({ site: { ...csm, slurm: { ...csm.slurm, siteEvents: { backstopSeconds: 600 } } } });
    const run = await runUpgrade(
      runtime,
      upgradeRequest({
        startingLabel: 'compute-nodes',
        upgradingLabel: 'upgrading-nodes',
        failedLabel: 'failed-nodes',
        upgradeStepSize: 8,
        upgradeTemplateId: 'cos-2.4',
        pollIntervalSeconds: POLL,
      }),
    );
    expect(run.outcome.status).toBe('SUCCEEDED');
    expect(run.report.messages.some((m) => /^Site triggers set \(strigger .* on 64 node\(s\)\).*backstop poll every 600 s/.test(m))).toBe(true);
    const sets = runtime.simulator.simulator.headNode.commandLog.filter((c) => c.includes('strigger') && c.includes("'--set'"));
    expect(sets).toHaveLength(3);
    for (const set of sets) expect(set).toContain("'--node=nid[000001-000064]'");
    // BOS boots: the drains are woken by firings, the boot and the return stay polls.
    expect((await delivered(runtime)).some((d) => d.startsWith('drained nid'))).toBe(true);
    expect(triggersOf(runtime, run.upgradeId)).toEqual([]);
  }, 180_000);

  it('a cancel while parked for the site wakes it at once; the cancelled session clears its triggers', async () => {
    runtime = (await startArmed(6)).runtime;
    const { run } = await startParked(runtime);
    expect(triggersOf(runtime, run.id)).toHaveLength(3);
    const cancelledAt = runtime.clock.now();
    await runtime.clock.busy(() => runtime!.cancel(run.id));
    expect((await run.outcome).status).toBe('SUCCEEDED');
    const session = (await runtime.store.getSession(run.id))!;
    expect(session.state).toBe('DELETED');
    // Woken by the cancel, not by the backstop: node 1's job (200 s) still holds the step's drain.
    expect((runtime.clock.now() - cancelledAt) / 1000).toBeLessThan(POLL);
    expect(triggersOf(runtime, run.id)).toEqual([]);
    expect(session.siteTriggers).toBeUndefined();
  }, 120_000);

  it('a stop while parked for the site wakes it at once; STOPPED clears the triggers, a resume sets them again and clears them at its end', async () => {
    const armed = await startArmed(6);
    runtime = armed.runtime;
    const { run, parked } = await startParked(runtime);
    expect(triggersOf(runtime, run.id)).toHaveLength(3);
    const stoppedAt = runtime.clock.now();
    await runtime.clock.busy(() => runtime!.stop(run.id));
    expect((await run.outcome).status).toBe('SUCCEEDED');
    // Woken by the stop, not by the 300 s backstop (node 1's job holds the step for 200 s).
    expect((runtime.clock.now() - stoppedAt) / 1000).toBeLessThan(POLL);
    expect(parked.siteTriggers).toMatchObject({ backstopSeconds: 300 });
    expect((await runtime.store.getSession(run.id))!.state).toBe('STOPPED');
    expect(triggersOf(runtime, run.id)).toEqual([]);

    const resumed = await runtime.run('rollingUpgrade', { resumeUpgradeId: run.id });
    expect((await resumed.outcome).status).toBe('SUCCEEDED');
    const session = (await runtime.store.getSession(run.id))!;
    expect(session.state).toBe('READY');
    expect(armed.triggers.armCalls).toBe(2);
    expect(triggersOf(runtime, run.id)).toEqual([]);
    expect(session.siteTriggers).toBeUndefined();
  }, 120_000);
});
