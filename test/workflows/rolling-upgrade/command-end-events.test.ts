import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { relaySimulatedCommandEnds } from '../../../local/simulated-command-relay';
import type { SiteEvent } from '../../../core/site/site-event';
import { siteProfileFor, type RunningSiteSimulator } from '../../../simulator';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { runUpgrade, startTestRuntime } from '../../support/embedded';
import { profileConnectors } from '../../support/ssm-connectors';
import { SIMULATED_RELAY } from '../../../local/simulated-trigger-relay';

/**
 * SSM without waiting (issue 29, item 3): a node's health check runs on the head node over SSM; where SSM's
 * status-change notifications reach the control plane (the profile's transport.commandNotifications; here the
 * simulated SSM's notifications bridged in process, as an EventBridge rule would deliver them), the wait for the
 * check parks in Wait For Site Event until its end, and its result is read once after; a lost notification is
 * caught by the backstop poll. Both runs have the site's Slurm triggers armed (scontrol and slurm-reboot over SSM):
 * they differ only in the notifications.
 */

const POLL = 30;
const NHC = 'ssh -o BatchMode=yes {node} /usr/sbin/nhc';
/** Each node's check takes 100 s: three polls and more when polled. Node 3's check fails. */
const site = () =>
  buildSite(4, {
    timing: { bootSeconds: 120, returnSeconds: 20, healthCheckSeconds: 100 },
    node: (i) => (i === 3 ? { faults: { healthCheck: 'fail' } } : {}),
  });
const request = (controls: Record<string, unknown>) =>
  upgradeRequest({ ...controls, pollIntervalSeconds: POLL, healthCheck: { command: NHC, timeoutSeconds: 300 } });

interface Started {
  runtime: EmbeddedRuntime;
  /** The site events taken (trigger firings and command ends). */
  delivered: SiteEvent[];
}

/**
 * A runtime on the ssm profile with siteEvents (triggers, relayed in process; none when `triggers` is false) and,
 * when `notifications`, SSM's notifications bridged.
 */
async function start(options: { notifications: boolean; backstopSeconds?: number; triggers?: boolean }): Promise<Started> {
  const delivered: SiteEvent[] = [];
  // Set once started: the in-process relays reach the runtime through it.
  const started: { runtime?: EmbeddedRuntime } = {};
  const deps = () => ({
    clock: {
      now: () => started.runtime!.clock.now(),
      sleep: (s: number, signal?: AbortSignal) => started.runtime!.clock.sleep(s, signal),
      busy: <T>(work: () => Promise<T>) => started.runtime!.clock.busy(work),
    },
    siteEvents: { record: (event: SiteEvent) => started.runtime!.siteEvents.record(event), list: () => started.runtime!.siteEvents.list() },
    controlPlane: { wakeForSiteEvent: (session: string) => started.runtime!.wakeForSiteEvent(session) },
    onTaken: (event: SiteEvent) => delivered.push(event),
  });
  const runtime = await startTestRuntime({
    site: site(),
    connectors: async (simulator: RunningSiteSimulator, connectorDeps) => {
      // The runtime relays the simulated slurmctld's trigger firings itself; the SSM notifications are this test's.
      const headNode = simulator.simulator.headNode;
      if (options.notifications) relaySimulatedCommandEnds(headNode.ssmNotifications, { ...deps(), commentOf: (id) => headNode.list(id)[0]?.comment });
      return profileConnectors((urls) => {
        const profile = siteProfileFor(urls, 'ssm', 1);
        const transport = profile.transport!;
        return {
          ...profile,
          ...(options.notifications && transport.type === 'ssm' ? { transport: { ...transport, commandNotifications: true } } : {}),
          workloadManager: {
            type: 'scontrol',
            ...(options.triggers === false
              ? {}
              : { siteEvents: { relay: SIMULATED_RELAY, ...(options.backstopSeconds ? { backstopSeconds: options.backstopSeconds } : {}) } }),
          },
        };
      })(simulator, connectorDeps);
    },
  });
  started.runtime = runtime;
  return { runtime, delivered };
}

/** Each health check the head node ran, with how many times its result was read (GetCommandInvocation). */
function healthChecks(runtime: EmbeddedRuntime) {
  return runtime.simulator.simulator.headNode
    .list()
    .filter((i) => i.commandLine.includes('nhc'))
    .map((i) => ({ comment: i.comment, polls: i.polls }));
}

describe("health check waits resumed by SSM's notifications", () => {
  const runtimes: EmbeddedRuntime[] = [];
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
  });

  it.each([
    ['lock-step', { upgradeStepSize: 2 }],
    ['window', { mode: 'window', maxUnavailable: 2 }],
  ])(
    '%s: parks for each check and reads its result once; same outcome as polled, fewer transitions',
    async (_mode, controls) => {
      const polled = await start({ notifications: false });
      runtimes.push(polled.runtime);
      const before = await runUpgrade(polled.runtime, request(controls));
      const polledSeconds = (polled.runtime.clock.now() - polled.runtime.clock.startAt) / 1000;
      const notified = await start({ notifications: true });
      runtimes.push(notified.runtime);
      const after = await runUpgrade(notified.runtime, request(controls));
      const notifiedSeconds = (notified.runtime.clock.now() - notified.runtime.clock.startAt) / 1000;

      for (const run of [before, after]) {
        expect(run.outcome.status).toBe('SUCCEEDED');
        expect(run.report.counts).toMatchObject({ UPGRADED: 3, FAILED: 1 });
        expect(run.report.nodes[nodeName(3)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-health-check-failed' });
      }
      // Every check was sent with the session's Comment, and its end delivered as a command event for that session and node.
      const checks = healthChecks(notified.runtime);
      expect(checks.map((c) => c.comment).sort()).toEqual([0, 1, 2, 3].map((i) => `rollout ${after.upgradeId} check ${nodeName(i)}`));
      const ends = notified.delivered.filter((e) => e.event === 'command');
      expect(ends.map((e) => e.nodes[0]).sort()).toEqual([0, 1, 2, 3].map(nodeName));
      expect(ends.every((e) => e.session === after.upgradeId)).toBe(true);
      expect(polled.delivered.filter((e) => e.event === 'command')).toEqual([]);
      // Polled, each check is read every poll until its 100 s are up; woken by its end, it is read once.
      const polledReads = healthChecks(polled.runtime).reduce((sum, c) => sum + c.polls, 0);
      const notifiedReads = checks.reduce((sum, c) => sum + c.polls, 0);
      console.log(
        `${_mode}: transitions ${before.outcome.figures.stateTransitions} -> ${after.outcome.figures.stateTransitions}, invocations ${before.outcome.figures.lambdaInvocations} -> ${after.outcome.figures.lambdaInvocations}, check reads ${polledReads} -> ${notifiedReads}, makespan ${polledSeconds} s -> ${notifiedSeconds} s`,
      );
      expect(checks.every((c) => c.polls === 1)).toBe(true);
      expect(polledReads).toBeGreaterThanOrEqual(3 * 4);
      expect(after.outcome.figures.stateTransitions).toBeLessThan(before.outcome.figures.stateTransitions);
      expect(after.outcome.figures.lambdaInvocations).toBeLessThan(before.outcome.figures.lambdaInvocations);
      // A check's end is acted on as it comes, not at the next poll.
      expect(notifiedSeconds).toBeLessThan(polledSeconds);
    },
    180_000,
  );

  it('no Slurm triggers at the site: the waits for the checks alone still park on the notifications, those for nodes poll', async () => {
    const polled = await start({ notifications: false, triggers: false });
    runtimes.push(polled.runtime);
    const before = await runUpgrade(polled.runtime, request({ upgradeStepSize: 4 }));
    const notified = await start({ notifications: true, triggers: false });
    runtimes.push(notified.runtime);
    const after = await runUpgrade(notified.runtime, request({ upgradeStepSize: 4 }));
    for (const run of [before, after]) {
      expect(run.outcome.status).toBe('SUCCEEDED');
      expect(run.report.counts).toMatchObject({ UPGRADED: 3, FAILED: 1 });
      expect(run.report.messages.some((m) => m.startsWith('Site triggers'))).toBe(false);
    }
    expect(notified.delivered.map((e) => e.event)).toEqual(['command', 'command', 'command', 'command']);
    // Parked for the checks: each read once, where the poll read each at every poll of its 100 s.
    expect(healthChecks(notified.runtime).every((c) => c.polls === 1)).toBe(true);
    expect(healthChecks(polled.runtime).every((c) => c.polls >= 3)).toBe(true);
    expect(after.outcome.figures.stateTransitions).toBeLessThan(before.outcome.figures.stateTransitions);
  }, 180_000);

  it('a lost notification: the backstop poll reads the check, the run ends alike', async () => {
    const { runtime, delivered } = await start({ notifications: true, backstopSeconds: 60 });
    runtimes.push(runtime);
    const notifications = runtime.simulator.simulator.headNode.ssmNotifications;
    notifications.faults.loseInvocationNotifications = 1_000_000;
    const started = runtime.clock.now();
    const run = await runUpgrade(runtime, request({ upgradeStepSize: 4 }));
    expect(run.outcome.status).toBe('SUCCEEDED');
    expect(run.report.counts).toMatchObject({ UPGRADED: 3, FAILED: 1 });
    expect(delivered.filter((e) => e.event === 'command')).toEqual([]);
    expect(notifications.lost).toBeGreaterThanOrEqual(4 * 2);
    // The checks' end was seen by the backstop (60 s after the park), not at their timeout (300 s).
    expect((runtime.clock.now() - started) / 1000).toBeLessThan(120 + 20 + 300);
  }, 120_000);
});
