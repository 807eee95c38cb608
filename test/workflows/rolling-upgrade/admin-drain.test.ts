import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { eventually, startTestRuntime } from '../../support/embedded';
import { parseSiteMark } from '../../../core/site/node-claims';

describe("an admin's drain on a node of the upgrade", () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('is kept with its reason while the step drains, and not lifted by a cancel', async () => {
    // n000 drained by an admin; a long job on n001 keeps step 0 in QUIESCING until the cancel.
    runtime = await startTestRuntime({
      site: buildSite(4, {
        node: (i) => (i === 0 ? { wlm: { state: 'DRAINED', reason: 'bad dimm' } } : i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 50_000 } } : {}),
      }),
    });
    const run = await runtime.run('rollingUpgrade', upgradeRequest());
    await eventually(
      runtime,
      async () => {
        const session = await runtime!.store.getSession(run.id);
        return session?.progress.stage === 'QUIESCING' ? session : undefined;
      },
      'step 0 to quiesce',
    );
    const drained = runtime.simulator.state().nodes;
    expect(drained[nodeName(0)]).toMatchObject({ wlmState: 'DRAINED', wlmReason: 'bad dimm', drainCount: 0 });
    expect(drained[nodeName(1)]).toMatchObject({ wlmReason: `rolling-upgrade ${run.id}`, drainCount: 1 });

    const live = runtime;
    await live.clock.busy(() => live.store.requestCancel(run.id));
    await run.outcome;

    const site = runtime.simulator.state();
    expect(site.nodes[nodeName(0)]).toMatchObject({ wlmState: 'DRAINED', wlmReason: 'bad dimm', resumeCount: 0 });
    expect(site.nodes[nodeName(1)]).toMatchObject({ wlmState: 'ALLOCATED', resumeCount: 1 });
  });

  it('stays after the node is upgraded: only our drain is lifted when a node returns', async () => {
    runtime = await startTestRuntime({ site: buildSite(3, { node: (i) => (i === 0 ? { wlm: { state: 'DRAINED', reason: 'bad dimm' } } : {}) }) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest());
    await run.outcome;

    const site = runtime.simulator.state();
    expect(site.nodes[nodeName(0)]).toMatchObject({ bootCount: 1, wlmState: 'DRAINED', wlmReason: 'bad dimm', resumeCount: 0 });
    expect(site.nodes[nodeName(1)]).toMatchObject({ bootCount: 1, wlmState: 'IDLE', resumeCount: 1 });
    const nodes = await runtime.store.listNodes(run.id);
    expect(nodes.map((n) => n.status)).toEqual(['UPGRADED', 'UPGRADED', 'UPGRADED']);
  });

  it.each([
    ['lock-step', {}],
    ['window', { mode: 'window', maxUnavailable: 1 }],
  ])("whose reason begins with `rolling-upgrade` but names no run is an admin's: kept byte for byte (%s)", async (_mode, extra) => {
    const reason = 'rolling-upgrade maintenance';
    runtime = await startTestRuntime({ site: buildSite(3, { node: (i) => (i === 2 ? { wlm: { state: 'DRAINED', reason } } : {}) }) });
    const run = await runtime.run('rollingUpgrade', upgradeRequest(extra));
    await run.outcome;

    const site = runtime.simulator.state();
    expect(site.nodes[nodeName(2)]).toMatchObject({ bootCount: 1, wlmState: 'DRAINED', wlmReason: reason, resumeCount: 0, drainCount: 0 });
    expect(site.nodes[nodeName(0)]).toMatchObject({ bootCount: 1, wlmState: 'IDLE', resumeCount: 1 });
  });
});

/**
 * Issue 26, item 7: Slurm 24.11 without accounting keeps a node's reason through RESUME (the
 * simulator follows it: slurm-version.ts clearsReasonWhenUp), so a finished run's claim would stay on
 * every node it returned. The run blanks its own claim; an admin's reason stays byte for byte.
 */
describe('the reason a run leaves on the nodes it returns, on Slurm 24.11 without accounting', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it.each([
    ['lock-step', {}],
    ['window', { mode: 'window', maxUnavailable: 2 }],
  ])('carries no claim of the run once it ended (%s); the admin-drained node keeps its reason', async (_mode, extra) => {
    runtime = await startTestRuntime({
      site: buildSite(4, {
        node: (i) => (i === 3 ? { wlm: { state: 'DRAINED', reason: 'bad dimm' } } : {}),
        slurm: { version: '24.11.5', accountingStorage: 'none' },
      }),
    });
    const run = await runtime.run('rollingUpgrade', upgradeRequest(extra));
    await run.outcome;
    const nodes = runtime.simulator.state().nodes;
    for (const i of [0, 1, 2]) {
      const node = nodes[nodeName(i)]!;
      expect([nodeName(i), node.bootCount, node.wlmState, parseSiteMark(node.wlmReason)]).toEqual([nodeName(i), 1, 'IDLE', undefined]);
      expect(node.wlmReason?.trim() ?? '').toBe('');
    }
    expect(nodes[nodeName(3)]).toMatchObject({ bootCount: 1, wlmState: 'DRAINED', wlmReason: 'bad dimm' });
    expect((await runtime.store.listNodes(run.id)).map((n) => n.status)).toEqual(['UPGRADED', 'UPGRADED', 'UPGRADED', 'UPGRADED']);
  });
});
