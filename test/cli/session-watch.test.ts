import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { rolloutClient } from '../../control-plane/aws-client/rollout-client';
import type { ControlPlane } from '../../control-plane/control-plane';
import { startServedControlPlane, type ServedControlPlane } from '../../local/serve';
import { TEST_SITE_UPGRADE, upgradeArgs } from '../../scripts/upgrade-args';
import { runCliInProcess } from '../support/cli';
import { eventually, startTestRuntime } from '../support/embedded';
import { buildSite, upgradeRequest } from '../support/sites';
import { until } from '../support/until';

/** `rollout session watch` ends for every end state, and for a session nothing runs any more; cancel says when nothing will pick it up. */

describe('rollout session watch, on a data directory', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-watch-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('ends for a HALTED session (no process holds the directory) with its summary', async () => {
    const site = path.join(dir, 'site.yaml');
    const definition = buildSite(3, { node: (i) => (i === 0 ? { faults: { boot: 'fail' } } : {}) });
    await writeFile(
      site,
      stringify({ ...definition, nodes: definition.nodes.map(({ name, nid, rack, faults }) => ({ name, nid, rack, ...(faults ? { faults } : {}) })) }),
    );
    const dataDir = path.join(dir, 'data');
    const upgrade = { ...TEST_SITE_UPGRADE, site, template: 'img-2', stepSize: 1, dataDir, json: true };
    const halted = await runCliInProcess(upgradeArgs({ ...upgrade, mode: 'window', maxUnavailable: 1, maxFailed: 0 }));
    const { upgradeId, state } = JSON.parse(halted.stdout) as { upgradeId: string; state: string };
    expect(state).toBe('HALTED');

    const watched = await runCliInProcess(['session', 'watch', upgradeId, '--data-dir', dataDir, '--json']);
    expect(watched.code).toBe(0);
    expect(JSON.parse(watched.stdout)).toMatchObject({ upgradeId, state: 'HALTED', completed: false });

    // The list shows a finished lock-step session at its last step (not one past it), a window as such.
    const lockstep = JSON.parse((await runCliInProcess(upgradeArgs({ ...upgrade, stepSize: 2 }))).stdout) as {
      upgradeId: string;
    };
    const listed = (await runCliInProcess(['session', 'list', '--data-dir', dataDir])).stdout;
    expect(listed).toMatch(new RegExp(`${lockstep.upgradeId} .* step 2 of 2 COMPLETE`));
    expect(listed).toMatch(new RegExp(`${upgradeId} .* window COMPLETE`));
  });
});

describe('rollout session watch and cancel, over an endpoint', () => {
  let served: ServedControlPlane;
  let client: ControlPlane;
  beforeAll(async () => {
    // Every node runs a long job: an upgrade holds in step 0 QUIESCING.
    served = await startServedControlPlane({
      site: { kind: 'simulated', definition: buildSite(4, { node: () => ({ wlm: { state: 'ALLOCATED', busySeconds: 10_000_000 } }) }) },
    });
    client = rolloutClient({ endpoints: served.endpoints, localCredentials: true, pollMs: 10 });
  });
  afterAll(async () => {
    await client.close();
    await served.close();
  });

  it('a stopped session: watch ends (exit 1, saying to resume) though another execution runs; cancel says nothing will pick it up until resumed', async () => {
    const quiescing = async (id: string) => {
      const progress = await client.progress(id);
      return progress?.kind === 'upgrade' && progress.stage === 'QUIESCING';
    };
    const stopped = await client.run('rollingUpgrade', upgradeRequest({ startingLabel: 'compute', upgradeStepSize: 2 }));
    await until(() => quiescing(stopped.id), 'the first upgrade QUIESCING');
    await client.abortExecution(stopped.executionArn);
    expect((await stopped.outcome).status).toBe('ABORTED');
    // An unrelated upgrade runs meanwhile (its own nodes: the stopped one still holds the first two).
    const other = await client.run('rollingUpgrade', upgradeRequest({ startingLabel: 'compute', upgradeStepSize: 4 }));
    expect(await client.isRunning('upgrade', other.id)).toBe(true);

    const url = served.endpoints.stepFunctionsEndpoint;
    const watched = await runCliInProcess(['session', 'watch', stopped.id, '--endpoint', url]);
    expect(watched.code).toBe(1);
    expect(watched.stderr).toContain(
      `upgrade ${stopped.id} has not ended, but no execution runs it (stopped, or its process died): carry it on with rollout session resume ${stopped.id} --endpoint ${url}`,
    );

    const cancelled = await runCliInProcess(['session', 'cancel', stopped.id, '--endpoint', url]);
    expect(cancelled.stdout).toContain(
      `upgrade ${stopped.id} is DELETING, but no execution runs it (stopped, or its process died): the cancel applies when it is resumed: rollout session resume ${stopped.id} --endpoint ${url}`,
    );
    const running = await runCliInProcess(['session', 'cancel', other.id, '--endpoint', url]);
    expect(running.stdout).toContain(`upgrade ${other.id} is DELETING: the running upgrade applies the deletion rules and cleans up`);

    const resumed = await runCliInProcess(['session', 'resume', stopped.id, '--endpoint', url, '--json']);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ upgradeId: stopped.id, state: 'DELETED' });
    // A cancelled session lists where the cancel found it (its first step of two), not its closing COMPLETE; steps count from 1.
    const listed = await runCliInProcess(['session', 'list', '--endpoint', url]);
    expect(listed.stdout).toMatch(new RegExp(`^${stopped.id} +upgrade +DELETED +.* cancelled at step 1 of 2, 0/4 done$`, 'm'));
    // Simulated instants in JSON are seconds from the session's start, never dates; the step counts from 1 there too.
    const got = JSON.parse((await runCliInProcess(['session', 'get', stopped.id, '--endpoint', url, '--json'])).stdout) as {
      createdAt: unknown;
      timeBase: string;
      progress: { step: number };
      messageLog: { at: unknown; text: string }[];
    };
    expect(got).toMatchObject({ timeBase: 'simulated', createdAt: { secondsFromStart: 0, timeBase: 'simulated' }, progress: { step: 1 } });
    expect(got.messageLog.length).toBeGreaterThan(0);
    for (const { at } of got.messageLog) expect(at).toEqual({ secondsFromStart: expect.any(Number), timeBase: 'simulated' });
    expect(got.messageLog.map((m) => m.text)).toContainEqual(expect.stringMatching(/^Step 1 of 2: draining 2 node\(s\)/));
    const listedJson = JSON.parse((await runCliInProcess(['session', 'list', '--endpoint', url, '--json'])).stdout) as { upgradeId: string }[];
    expect(listedJson.find((e) => e.upgradeId === stopped.id)).toMatchObject({ step: 1, createdAt: { secondsFromStart: 0, timeBase: 'simulated' } });
    const watchedAgain = await runCliInProcess(['session', 'watch', other.id, '--endpoint', url, '--json']);
    expect(watchedAgain.code).toBe(0);
    expect(JSON.parse(watchedAgain.stdout)).toMatchObject({ upgradeId: other.id, state: 'DELETED' });
  });
});

describe('the counts on the session item (what progress reads: one item per poll)', () => {
  it('agree with the node records at the end of a lock-step run, a window run and a cancelled run', async () => {
    const runtime = await startTestRuntime({
      site: buildSite(6, { node: (i) => (i === 1 ? { faults: { boot: 'fail' } } : i === 5 ? { wlm: { state: 'ALLOCATED', busySeconds: 10_000_000 } } : {}) }),
    });
    const fromRecords = async (id: string) => {
      const nodes = await runtime.store.listNodes(id);
      return { upgraded: nodes.filter((n) => n.status === 'UPGRADED').length, failed: nodes.filter((n) => n.status === 'FAILED').length };
    };
    try {
      const lockstep = await runtime.run('rollingUpgrade', upgradeRequest({ upgradeStepSize: 2, quiesceTimeoutSeconds: 60 }));
      await lockstep.outcome;
      const window = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 2, quiesceTimeoutSeconds: 60 }));
      await window.outcome;
      for (const id of [lockstep.id, window.id]) {
        expect(await fromRecords(id)).toEqual({ upgraded: 4, failed: 2 });
        expect(await runtime.progress(id)).toMatchObject({ upgraded: 4, failed: 2 });
      }
      // Cancelled in step 0 after its boot (node 1's failed): the deletion rules fail every node not completed, counted too.
      const cancelled = await runtime.run('rollingUpgrade', upgradeRequest({ upgradeStepSize: 2, startingLabel: 'compute' }));
      await eventually(
        runtime,
        async () => ((await runtime.store.getSession(cancelled.id))?.progress.stage === 'WLM_WAITING' ? true : undefined),
        'WLM_WAITING',
      );
      await runtime.clock.busy(() => runtime.cancel(cancelled.id));
      await cancelled.outcome;
      expect(await fromRecords(cancelled.id)).toEqual({ upgraded: 0, failed: 6 });
      expect(await runtime.progress(cancelled.id)).toMatchObject({ upgraded: 0, failed: 6 });
    } finally {
      await runtime.close();
    }
  });
});
