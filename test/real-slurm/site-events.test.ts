import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isUpgradeDrainReason } from '../../core/site/node-claims';
import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { openRuntime } from '../../local/open-runtime';
import { RELAY_SCRIPT } from '../../local/site-relay-script';
import { RealSlurmCluster } from '../../scripts/slurm/real-slurm';
import { clusterRelayPath, clusterSiteProfile, clusterSpool, spooledFiringFiles, triggersOfSession } from '../../scripts/slurm/site-events-on-cluster';
import { startCli } from '../support/cli';
import { describeRealSlurm } from '../support/describe-real-slurm';

/**
 * Waits resumed by Slurm's own triggers (issue 29) on a real Slurm, per release: the site profile of the local
 * connectors (scontrol, slurm-reboot, the slurm inventory) with siteEvents, its relay the sh script `rollout relay
 * script` wrote into the cluster's dir (slurmctld runs it, in its chroot for 24.11 and 26.05), its spool beside it
 * read by the runtime in this process. Lock-step (a node busy on a real job: its quiesce ends with a `drained`
 * firing) and the window (cap 2) on two clusters side by side, then a stop while parked. The backstop is 300 s:
 * a wait not woken by a firing would hold its run that long, so runs of well under a minute were woken each time.
 */
const BACKSTOP_SECONDS = 300;
const POLL_SECONDS = 30;
const NODES = 4;

describeRealSlurm('waits resumed by Slurm triggers through the sh relay and its spool', (release) => {
  let lockStep: RealSlurmCluster;
  let window: RealSlurmCluster;

  beforeAll(async () => {
    const start = () => RealSlurmCluster.start({ release, nodes: NODES, rebootDelaySeconds: 2, restd: false, returnToService: 2 });
    [lockStep, window] = await Promise.all([start(), start()]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([lockStep?.stop(), window?.stop()]);
  }, 60_000);

  /** The relay as an admin installs it (`rollout relay script --output`), and a runtime of the profile naming it, reading its spool. */
  const armedRuntime = async (cluster: RealSlurmCluster): Promise<{ runtime: EmbeddedRuntime; spool: string }> => {
    const relay = clusterRelayPath(cluster);
    if (!existsSync(relay)) {
      const written = await startCli(['relay', 'script', '--output', relay], cluster.env).done;
      expect([written.code, written.stderr]).toEqual([0, `the relay script is in ${relay}\n`]);
      expect(readFileSync(relay, 'utf8')).toBe(RELAY_SCRIPT);
    }
    const spool = clusterSpool(cluster);
    const profile = clusterSiteProfile(cluster, { relay, spool, backstopSeconds: BACKSTOP_SECONDS });
    return { runtime: await openRuntime({ site: { kind: 'profile', profile, baseDir: cluster.dir } }), spool };
  };

  const request = (options: { step?: number; window?: boolean }) => ({
    startingLabel: 'batch',
    upgradingLabel: 'upgrading',
    failedLabel: 'failed',
    upgradeStepSize: options.step ?? 1,
    upgradeTemplateId: 'img-2',
    workloadManagerType: 'slurm',
    pollIntervalSeconds: POLL_SECONDS,
    ...(options.window ? { mode: 'window', maxUnavailable: 2 } : {}),
  });

  /** Samples the session's triggers in `strigger --get` until `done` settles: the most seen at once. */
  const sampleTriggers = (cluster: RealSlurmCluster, id: () => string | undefined, done: Promise<unknown>) => {
    let settled = false;
    void done.finally(() => (settled = true));
    return (async () => {
      let most = 0;
      while (!settled) {
        const session = id();
        if (session) most = Math.max(most, await triggersOfSession(cluster, session));
        await new Promise((r) => setTimeout(r, 1000));
      }
      return most;
    })();
  };

  /** One whole run: every node upgraded and rebooted once, woken by firings, its triggers gone and its spool empty at the end. */
  const upgradeWoken = async (cluster: RealSlurmCluster, options: { step?: number; window?: boolean; busy?: string }) => {
    const { runtime, spool } = await armedRuntime(cluster);
    try {
      const reboots = cluster.rebootLog().length;
      const job = options.busy ? await cluster.submitJob(options.busy, { seconds: 8 }) : undefined;
      const started = Date.now();
      const run = await runtime.run('rollingUpgrade', request(options));
      const outcome = run.outcome;
      const mostTriggers = sampleTriggers(cluster, () => run.id, outcome);
      expect((await outcome).status).toBe('SUCCEEDED');
      const seconds = (Date.now() - started) / 1000;
      const session = (await runtime.store.getSession(run.id))!;
      const records = await runtime.store.listNodes(run.id);
      const messages = await runtime.store.messages.list(run.id);
      const taken = (await runtime.siteEvents.list()).filter((e) => e.session === run.id);
      const result = {
        seconds,
        state: session.state,
        statuses: records.map((r) => r.status),
        rebooted: cluster.rebootCounts(),
        firings: taken.map((e) => `${e.event} ${e.nodes.join(',')}`),
      };
      console.log(
        `Slurm ${cluster.version}, ${options.window ? 'window cap 2' : `lock-step step ${options.step}`}: ${JSON.stringify({ ...result, siteEventCount: session.siteEventCount })}`,
      );
      expect([result.state, result.statuses]).toEqual(['READY', Array(NODES).fill('UPGRADED')]);
      expect(
        cluster
          .rebootLog()
          .slice(reboots)
          .map((r) => r.node)
          .sort(),
      ).toEqual([...cluster.nodes]);
      // Set while it ran (one per event kind), cleared at its end; every firing taken from the spool, none refused.
      expect(await mostTriggers).toBe(3);
      expect(messages.some((m) => m.startsWith('Site triggers set (strigger ') && m.includes(`backstop poll every ${BACKSTOP_SECONDS} s`))).toBe(true);
      expect(messages).toContain('Site triggers cleared (3)');
      expect(await triggersOfSession(cluster, run.id)).toBe(0);
      expect(session.siteTriggers).toBeUndefined();
      expect(spooledFiringFiles(spool)).toEqual([]);
      expect(existsSync(path.join(spool, 'rejected')) ? readdirSync(path.join(spool, 'rejected')) : []).toEqual([]);
      // Woken by the firings: each node's `up` taken, and no wait ran to the backstop (one would hold the run 300 s).
      // Counted at most once each (a firing of a kind the parked wait does not end is not counted: a node's own drain while it reboots).
      expect(session.siteEventCount).toBeGreaterThan(0);
      expect(session.siteEventCount).toBeLessThanOrEqual(taken.length);
      expect(
        taken
          .filter((e) => e.event === 'up')
          .flatMap((e) => e.nodes)
          .sort(),
      ).toEqual([...cluster.nodes]);
      expect(seconds).toBeLessThan(BACKSTOP_SECONDS / 3);
      if (job !== undefined) {
        // The busy node's quiesce ended with its `drained` firing, once its job was gone.
        expect(taken.some((e) => e.event === 'drained' && e.nodes.includes(options.busy!))).toBe(true);
        await cluster.waitForJob(job, (s) => s === undefined, 'ended');
      }
      // Every node back in service, none left drained by the run (a node just resumed may miss a ping for a few seconds: idle*).
      await cluster.waitForNodes(
        (nodes) => nodes.every((n) => n.base === 'IDLE' && n.flags.length === 0 && !isUpgradeDrainReason(n.reason)),
        'every node idle, none drained by the run',
        30_000,
      );
    } finally {
      await runtime.close();
    }
  };

  /** A stop while the session is parked for the site: woken at once, STOPPED, its triggers cleared, no node left drained by it. */
  const stopWhileParked = async (cluster: RealSlurmCluster) => {
    const { runtime } = await armedRuntime(cluster);
    const job = await cluster.submitJob('c01', { seconds: 120 });
    try {
      const run = await runtime.run('rollingUpgrade', request({ step: 2 }));
      const deadline = Date.now() + 60_000;
      for (;;) {
        const session = await runtime.store.getSession(run.id);
        if (session?.siteWaitToken && session.progress.stage === 'QUIESCING') break;
        if (Date.now() > deadline) throw new Error(`the session did not park for the site while c01 drains: ${JSON.stringify(session?.progress)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(await triggersOfSession(cluster, run.id)).toBe(3);
      const stoppedAt = Date.now();
      await runtime.stop(run.id);
      expect((await run.outcome).status).toBe('SUCCEEDED');
      expect((Date.now() - stoppedAt) / 1000).toBeLessThan(POLL_SECONDS);
      const session = (await runtime.store.getSession(run.id))!;
      expect(session.state).toBe('STOPPED');
      expect(await runtime.store.messages.list(run.id)).toContain('Site triggers cleared (3)');
      expect(await triggersOfSession(cluster, run.id)).toBe(0);
      expect(session.siteTriggers).toBeUndefined();
    } finally {
      await runtime.close();
      await cluster.cancelJob(job);
    }
    // The drain the stop lifted: no node of ours left out of service.
    await cluster.waitForNodes((nodes) => nodes.every((n) => n.base === 'IDLE' && n.flags.length === 0), 'every node idle, none drained', 30_000);
  };

  test('lock-step (a node busy) and the window: woken by firings, never the backstop; triggers set while running and gone after, also after a stop', async () => {
    await Promise.all([
      (async () => {
        await upgradeWoken(lockStep, { step: NODES, busy: 'c02' });
        await stopWhileParked(lockStep);
      })(),
      upgradeWoken(window, { window: true }),
    ]);
  }, 240_000);
});
