import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { simulatedSiteClients } from '../../../local/simulated-site-clients';
import { takeSiteEvent } from '../../../control-plane/site-event-intake';
import { parseRelayProgram } from '../../../core/site/site-event';
import type { RunningSiteSimulator } from '../../../simulator';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { eventually, runUpgrade, startTestRuntime } from '../../support/embedded';
import { firingsAsSiteEvents, modelTriggers } from '../../support/model-triggers';

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
  triggers: ReturnType<typeof modelTriggers>;
  delivered: string[];
}

async function startArmed(count: number, backstopSeconds?: number): Promise<Armed> {
  let triggers: ReturnType<typeof modelTriggers> | undefined;
  const delivered: string[] = [];
  let runtime: EmbeddedRuntime | undefined;
  runtime = await startTestRuntime({
    site: site(count),
    connectors: (simulator: RunningSiteSimulator) => {
      const clients = simulatedSiteClients(simulator);
      const model = simulator.simulator.workloadManager.triggers;
      triggers = modelTriggers(model, backstopSeconds);
      Object.assign(clients.workloadManager, { triggers });
      firingsAsSiteEvents(model, (event) => {
        delivered.push(`${event.event} ${event.nodes.join(',')}`);
        void runtime!.clock.busy(() => takeSiteEvent(event, { siteEvents: runtime!.siteEvents, controlPlane: runtime! }));
      });
      return clients;
    },
  });
  return { runtime, triggers: triggers!, delivered };
}

/** The triggers a session left in the simulated slurmctld (`strigger --get`). */
function triggersOf(runtime: EmbeddedRuntime, upgradeId: string) {
  return runtime.simulator.simulator.workloadManager.triggers.list().filter((t) => parseRelayProgram(t.program)?.session === upgradeId);
}

describe('waits resumed by the site events (Slurm triggers through the relay)', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('lock-step: parks instead of polling, woken by drained and up firings; every node upgraded; triggers cleared at the end', async () => {
    const polled = await startTestRuntime({ site: site(8) });
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
    expect(armed.delivered.some((d) => d.startsWith('drained') && d.includes(nodeName(1)))).toBe(true);
    expect(armed.delivered.some((d) => d.startsWith('up'))).toBe(true);
    // Fewer state transitions than polling every 30 s, and no slower than one trigger pass (16 s) per wait.
    expect(after.outcome.figures.stateTransitions).toBeLessThan(before.outcome.figures.stateTransitions * 0.75);
    const state = runtime.simulator.state();
    for (let i = 0; i < 8; i++) expect(state.nodes[nodeName(i)]).toMatchObject({ bootCount: 1, wlmState: 'IDLE' });
    expect(state.violations).toEqual([]);
    const armedSeconds = (runtime.clock.now() - started) / 1000;
    const polledSeconds = (polledEnd - 0) / 1000;
    expect(armedSeconds).toBeLessThanOrEqual(polledSeconds + 2 * 16);
  }, 120_000);

  it('firings lost (a dead relay): the backstop poll still finishes the run, every timeout holds', async () => {
    const armed = await startArmed(4, 60);
    runtime = armed.runtime;
    runtime.simulator.simulator.workloadManager.triggers.faults.loseFirings = 1_000_000;
    const after = await runUpgrade(runtime, upgradeRequest({ upgradeStepSize: 4, pollIntervalSeconds: POLL }));
    expect(after.outcome.status).toBe('SUCCEEDED');
    expect(after.report.counts).toMatchObject({ UPGRADED: 4, FAILED: 0 });
    expect(armed.delivered).toEqual([]);
    expect(triggersOf(runtime, after.upgradeId)).toEqual([]);
  }, 120_000);

  it('a stop while parked for the site wakes it at once; STOPPED clears the triggers, a resume sets them again and clears them at its end', async () => {
    const armed = await startArmed(6);
    runtime = armed.runtime;
    const run = await runtime.run('rollingUpgrade', upgradeRequest({ upgradeStepSize: 2, pollIntervalSeconds: POLL }));
    void run.outcome.then(async () => console.log((await runtime!.store.messages.listTimed(run.id)).map((m) => JSON.stringify(m)).join('\n')));
    const parked = await eventually(
      runtime,
      async () => {
        const session = await runtime!.store.getSession(run.id);
        return session?.siteWaitToken && session.progress.step === 0 && session.progress.stage === 'QUIESCING' ? session : undefined;
      },
      'the session parked for the site while step 1 drains',
    );
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
