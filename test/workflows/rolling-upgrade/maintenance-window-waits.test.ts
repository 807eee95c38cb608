import { call, startServedApi } from '../../support/api';
import { causeMessage } from '../../../control-plane/execution-cause';
import { runUpgrade, startTestRuntime } from '../../support/embedded';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';

/**
 * Issue 26, item 5: a maintenance window that never opens (`0 0 30 2 *`: 30 February) was accepted,
 * and the run stayed UPDATING for ever, "waiting for maintenance-window", posting no message. Such a
 * window is now refused by the one request validation every path shares (here: the Step Functions
 * input and the REST API; the CLI's flags in test/cli/maintenance-window.test.ts), and a run held back
 * by a gate says why in a message at every poll while it waits, no more often.
 */
const NEVER = { cron: '0 0 30 2 *', durationMinutes: 60, timeZone: 'UTC' };

describe('a maintenance window that never opens', () => {
  it('is refused as the workflow input (InvalidInputError naming maintenanceWindows[0].cron); the site is not touched', async () => {
    const runtime = await startTestRuntime({ site: buildSite(4) });
    try {
      const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 1, maintenanceWindows: [NEVER] }));
      const outcome = await run.outcome;
      expect(outcome).toMatchObject({ status: 'FAILED', error: 'InvalidInputError' });
      expect(causeMessage(outcome)).toMatch(
        /maintenanceWindows\[0\]\.cron: cron '0 0 30 2 \*' opens no maintenance window in the next year .*: it matches no date at all/,
      );
      expect(runtime.simulator.state().changes).toEqual([]);
    } finally {
      await runtime.close();
    }
  });

  it('is refused by the REST API with a 422 naming maintenanceWindows[0].cron', async () => {
    const served = await startServedApi(buildSite(2));
    try {
      const reply = await call(served.runtime, served.apiEndpoint, 'POST', '/sessions', upgradeRequest({ mode: 'window', maintenanceWindows: [NEVER] }));
      expect(reply.status).toBe(422);
      expect(reply.body.errors).toEqual([
        { field: 'maintenanceWindows[0].cron', message: expect.stringContaining('opens no maintenance window in the next year') },
      ]);
      expect(served.runtime.simulator.state().changes).toEqual([]);
    } finally {
      await served.close();
    }
  });
});

describe('a run waiting on a gate', () => {
  it('says why at every poll while its maintenance window is closed (not more often), then upgrades every node inside the window', async () => {
    // The simulated clock starts at 2026-01-01T00:00Z: the window opens at 03:00, three hours in.
    const runtime = await startTestRuntime({ site: buildSite(3) });
    try {
      const poll = 300;
      const { report, upgradeId } = await runUpgrade(
        runtime,
        upgradeRequest({
          mode: 'window',
          maxUnavailable: 1,
          pollIntervalSeconds: poll,
          maintenanceWindows: [{ cron: '0 3 * * *', durationMinutes: 120, timeZone: 'UTC' }],
        }),
      );
      expect(report).toMatchObject({ state: 'READY', completed: true });
      const opensAt = Date.parse('2026-01-01T03:00:00Z');
      // The site: nothing changed before the window opened; every node was drained and rebooted once, inside it.
      const changes = runtime.simulator.state().changes.filter((c) => c.by === upgradeId);
      expect(changes.length).toBeGreaterThan(0);
      expect(changes.every((c) => c.at >= opensAt && c.at < opensAt + 120 * 60_000)).toBe(true);
      for (let i = 0; i < 3; i++) expect(runtime.simulator.state().nodes[nodeName(i)]).toMatchObject({ bootCount: 1, drainCount: 1 });

      const waits = report.messageLog.filter((m) => m.text.startsWith('Window waiting: '));
      const before = waits.filter((m) => Date.parse(m.at) < opensAt);
      expect(before[0]!.text).toBe('Window waiting: no maintenance window is open; the next opens in 3h: no node starts until then');
      // One a poll from the first increment to the opening: 3 h / 300 s.
      expect(before).toHaveLength((3 * 3600) / poll);
      const gaps = before.slice(1).map((m, i) => (Date.parse(m.at) - Date.parse(before[i]!.at)) / 1000);
      expect(new Set(gaps)).toEqual(new Set([poll]));
      expect(before.at(-1)!.text).toBe('Window waiting: no maintenance window is open; the next opens in 5m: no node starts until then');
      expect(waits.filter((m) => Date.parse(m.at) >= opensAt)).toEqual([]);
    } finally {
      await runtime.close();
    }
  });

  it('says why at every poll while it bakes between batches', async () => {
    const runtime = await startTestRuntime({ site: buildSite(3) });
    try {
      const poll = 300;
      const { report } = await runUpgrade(
        runtime,
        upgradeRequest({ mode: 'window', maxUnavailable: 1, batches: [1], bakeSeconds: 900, pollIntervalSeconds: poll }),
      );
      expect(report).toMatchObject({ state: 'READY', completed: true });
      const waits = report.messageLog.filter((m) => m.text.startsWith('Window waiting: '));
      expect(waits.map((m) => m.text)).toEqual([
        'Window waiting: baking after the last batch for 15m more before the next starts',
        'Window waiting: baking after the last batch for 10m more before the next starts',
        'Window waiting: baking after the last batch for 5m more before the next starts',
      ]);
      // The second batch started on the site only once the bake was over.
      const firstBack = Date.parse(report.messageLog.find((m) => m.text.startsWith('Window: 1 node(s) back in service'))!.at);
      const secondDrains = runtime.simulator.state().changes.filter((c) => c.change === 'drain' && c.node !== nodeName(0));
      expect(secondDrains.every((c) => c.at >= firstBack + 900_000)).toBe(true);
    } finally {
      await runtime.close();
    }
  });

  it('says at every poll that the nodes it could start are locked by another session', async () => {
    const runtime = await startTestRuntime({
      site: buildSite(2, { groups: { compute: [nodeName(0), nodeName(1)], upgrading: [], failed: [], upB: [], failB: [] } }),
    });
    try {
      const poll = 30;
      const common = { mode: 'window', maxUnavailable: 2, pollIntervalSeconds: poll };
      const first = await runtime.run('rollingUpgrade', upgradeRequest(common));
      const second = await runtime.run('rollingUpgrade', upgradeRequest({ ...common, upgradingLabel: 'upB', failedLabel: 'failB' }));
      const [a, b] = await Promise.all([first.outcome, second.outcome]);
      expect([a.status, b.status]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
      // Whichever waited said so at each poll while the other held the nodes; the site never saw both on a node at once.
      const timed = [...(await runtime.store.messages.listTimed(first.id)), ...(await runtime.store.messages.listTimed(second.id))];
      const waits = timed.filter((m) => m.text.includes('another session holds their lock')).map((m) => Date.parse(m.at));
      expect(waits.length).toBeGreaterThan(1);
      expect(waits.slice(1).every((at, i) => at - waits[i]! >= poll * 1000)).toBe(true);
      expect(runtime.simulator.state().violations).toEqual([]);
      for (let i = 0; i < 2; i++) expect(runtime.simulator.state().nodes[nodeName(i)]!.bootCount).toBe(2);
    } finally {
      await runtime.close();
    }
  });
});
