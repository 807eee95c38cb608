import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { eventually, startTestRuntime } from '../../support/embedded';

describe('rolling upgrade when the site is in trouble', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('posts a message for a missing group and goes on once the group exists', async () => {
    runtime = await startTestRuntime({ site: buildSite(4, { groups: { compute: [0, 1, 2, 3].map(nodeName), upgrading: [] } }) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest());
    const message = await eventually(
      runtime!,
      async () => {
        const messages = await runtime!.store.messages.list(run.id);
        return messages.find((m) => m.includes("failed to obtain Node Group named 'failed'"));
      },
      'the missing-group message',
    );
    expect(message).toBe("Processing step 1 in stage STARTING failed - failed to obtain Node Group named 'failed'");
    // Retried several times meanwhile, the message said once (not at every poll), and it is what a progress display shows.
    await eventually(runtime, async () => ((await runtime!.store.getSession(run.id))!.progress.errorCount >= 4 ? true : undefined), 'four retries');
    expect((await runtime.store.messages.list(run.id)).filter((m) => m === message)).toHaveLength(1);
    expect(await runtime.progress(run.id)).toMatchObject({ kind: 'upgrade', stage: 'STARTING', message });
    // Nothing was touched while the group was missing.
    expect(runtime.simulator.state().nodes[nodeName(0)]!.drainCount).toBe(0);

    const url = runtime.simulator.url;
    const created = await runtime.clock.busy(() =>
      fetch(`${url}/hsm/v2/groups`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ label: 'failed', members: { ids: [] } }),
      }),
    );
    expect(created.status).toBe(201);
    const outcome = await run.outcome;

    expect(outcome.status).toBe('SUCCEEDED');
    const session = await runtime.store.getSession(run.id);
    expect(session).toMatchObject({ state: 'READY', completed: true });
  });

  it('never lets two sessions work on the same node at once', async () => {
    // Two sessions whose starting groups share n003..n005, in opposite orders; a job on n004 keeps
    // B on the shared nodes while A reaches them.
    const a = [0, 1, 2, 3, 4, 5].map(nodeName);
    const b = [5, 4, 3, 6, 7, 8].map(nodeName);
    runtime = await startTestRuntime({
      site: buildSite(9, {
        groups: { a, b, upA: [], upB: [], failA: [], failB: [] },
        node: (i) => (i === 4 ? { wlm: { state: 'ALLOCATED', busySeconds: 4000 } } : {}),
      }),
    });
    // Polls a minute apart: on virtual time every poll of the 4,000-second wait runs.
    const common = { upgradeStepSize: 3, pollIntervalSeconds: 60 };
    // Both started in the same tick.
    const [runA, runB] = await Promise.all([
      runtime.run('rollingUpgrade', upgradeRequest({ ...common, startingLabel: 'a', upgradingLabel: 'upA', failedLabel: 'failA' })),
      runtime.run('rollingUpgrade', upgradeRequest({ ...common, startingLabel: 'b', upgradingLabel: 'upB', failedLabel: 'failB' })),
    ]);
    const [outA, outB] = await Promise.all([runA.outcome, runB.outcome]);

    expect([outA.status, outB.status]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    const site = runtime.simulator.state();
    expect(site.violations).toEqual([]);
    for (const name of [3, 4, 5].map(nodeName)) expect(site.nodes[name]!.bootCount).toBe(2);
    for (const name of [0, 1, 2, 6, 7, 8].map(nodeName)) expect(site.nodes[name]!.bootCount).toBe(1);
    const [nodesA, nodesB] = await Promise.all([runtime.store.listNodes(runA.id), runtime.store.listNodes(runB.id)]);
    expect(nodesA.every((n) => n.status === 'UPGRADED')).toBe(true);
    expect(nodesB.every((n) => n.status === 'UPGRADED')).toBe(true);
    const timed = [...(await runtime.store.messages.listTimed(runA.id)), ...(await runtime.store.messages.listTimed(runB.id))];
    // The wait happened, and was said at every poll while it lasted, never more often (issue 26: a waiting run is never silent).
    const waits = timed.filter((m) => m.text.includes('waits for nodes locked by session')).map((m) => Date.parse(m.at));
    expect(waits.length).toBeGreaterThan(1);
    expect(waits.slice(1).every((at, i) => at - waits[i]! >= 60_000)).toBe(true);
    expect((await runtime.store.locks.getLockOwners([...a, ...b])).size).toBe(0);
  });
});
