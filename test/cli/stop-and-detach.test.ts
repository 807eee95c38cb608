import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { upgradeArgs } from '../../scripts/upgrade-args';
import { BUSY_SITE_NODES, BUSY_SITE_UPGRADE, busyNodeSiteYaml } from '../support/busy-node-site';
import { runCli, runCliInProcess, runPrinted, startCli } from '../support/cli';
import { startServe, type RunningServe } from '../support/serve';

/**
 * Ctrl-C, --detach, `session stop` and `session cancel`'s question, as an operator meets them: each
 * `rollout` a process of its own. Node 2 runs a long job, so a lock-step upgrade in steps of 2 sits in
 * step 1 (QUIESCING) after its first step has booted.
 */
const STEP_1_DRAINING = 'Step 2 of 3: draining 2 node(s)';

async function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 300_000): Promise<T> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    const value = await probe();
    if (value !== undefined) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Starts `rollout ARGS` and resolves once its progress (stderr) says step 1 drains: the moment an operator presses Ctrl-C. */
async function startUntilStep1(args: string[]): Promise<ReturnType<typeof startCli> & { seen: () => string }> {
  const started = startCli(args);
  let stderr = '';
  started.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await until(async () => (stderr.includes(STEP_1_DRAINING) ? true : undefined), 'step 1 draining');
  return { ...started, seen: () => stderr };
}

/** The newest session's id, through `rollout session list`. */
async function newestSession(where: string[]): Promise<string> {
  const listed = await runCliInProcess(['session', 'list', ...where, '--json']);
  return (JSON.parse(listed.stdout) as { upgradeId: string }[])[0]!.upgradeId;
}

let dir: string;
/** Node 2's job ends after 3,000 s (a resumed run waits for it), or never within the tests. */
let site: string;
let longSite: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-stop-'));
  site = path.join(dir, 'site.yaml');
  longSite = path.join(dir, 'long-site.yaml');
  await writeFile(site, busyNodeSiteYaml(3000));
  await writeFile(longSite, busyNodeSiteYaml(10_000_000));
});

describe('Ctrl-C of the embedded run', () => {
  it('stops the session (the draining step put back, nothing failed), prints the summary; resume carries it on to its end', async () => {
    const dataDir = path.join(dir, 'embedded');
    // On the wall clock sped up 10 times: step 1 then waits ~300 s for node 2's job, so the Ctrl-C lands in it (on virtual
    // time the run jumps to the job's end and may be past step 1 before the signal arrives).
    const upgrade = await startUntilStep1(upgradeArgs({ ...BUSY_SITE_UPGRADE, site, timeScale: 10, json: true, dataDir }));
    upgrade.child.kill('SIGINT');
    const stopped = await upgrade.done;
    const id = (JSON.parse(stopped.stdout) as { upgradeId: string }).upgradeId;
    expect(stopped.stderr).toContain(`stopping upgrade ${id}: what is in flight finishes, nothing new starts (Ctrl-C again to leave at once)`);
    expect(stopped.code).toBe(1);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ upgradeId: id, state: 'STOPPED', completed: false, counts: { UPGRADED: 2, FAILED: 0, NOT_STARTED: 4 } });

    // The summary names the whole resume (the data directory, the site the run used); pasted as printed, it carries the run on to its end.
    const shown = await runCliInProcess(['session', 'get', id, '--data-dir', dataDir]);
    const resumeHint = /carry it on with: (rollout session resume .*)$/m.exec(shown.stdout)?.[1];
    expect(resumeHint).toBe(`rollout session resume ${id} --data-dir ${dataDir} --site ${site}`);
    const resumed = await runPrinted(`${resumeHint!} --json`);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ upgradeId: id, state: 'READY', completed: true, counts: { UPGRADED: 6 } });
  }, 600_000);
});

describe('Ctrl-C of an embedded deployment', () => {
  it('stops it: the actions in flight finish, no group or batch starts after them, it ends STOPPED with its summary (it used to exit 130 and leave it RUNNING)', async () => {
    const deploySite = path.join(dir, 'deploy-site.yaml');
    await writeFile(
      deploySite,
      stringify({
        nodes: BUSY_SITE_NODES.map((name, i) => ({ name, nid: i + 1 })),
        groups: { compute: BUSY_SITE_NODES },
        bootTemplates: ['cos-2.4'],
        timing: { prepareSeconds: 600, deploySeconds: 600 },
      }),
    );
    // On the wall clock sped up 100 times (a prepare takes 6 s): on virtual time the whole deployment ends before a Ctrl-C can arrive.
    const deploy = startCli(['deploy', '--site', deploySite, '--nodes', BUSY_SITE_NODES.join(','), '--poll-interval', '30', '--time-scale', '100', '--json']);
    let stderr = '';
    deploy.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await until(async () => (stderr.includes('groups: ') ? true : undefined), 'the deployment progress');
    deploy.child.kill('SIGINT');
    const stopped = await deploy.done;
    expect(stopped.stderr).toMatch(/stopping deployment [0-9a-f-]+: what is in flight finishes, nothing new starts/);
    expect(stopped.code).toBe(1);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ status: 'STOPPED' });
  }, 600_000);
});

describe('a client of rollout serve', () => {
  let serve: RunningServe;
  let where: string[];
  beforeAll(async () => {
    serve = await startServe(['--site', longSite, '--port', '0', '--api-port', '0']);
    where = ['--endpoint', serve.endpoints.stepFunctionsEndpoint];
  }, 300_000);
  afterAll(async () => {
    await serve?.stop();
  });

  it('detaches on Ctrl-C (exit 130) saying how to watch, stop or cancel; the session goes on; cancel asks first; stop ends it STOPPED', async () => {
    const upgrade = await startUntilStep1([...upgradeArgs(BUSY_SITE_UPGRADE), ...where]);
    upgrade.child.kill('SIGINT');
    const id = await newestSession(where);
    const detached = await upgrade.done;
    expect(detached.code).toBe(130);
    expect(detached.stderr).toContain(`detached: upgrade ${id} goes on without this process`);
    expect(detached.stderr).toContain(`rollout session stop ${id} --endpoint ${serve.endpoints.stepFunctionsEndpoint}`);
    expect(detached.stderr).toContain(`rollout session cancel ${id} --endpoint ${serve.endpoints.stepFunctionsEndpoint}`);
    expect((await runCliInProcess(['session', 'get', id, ...where, '--json'])).stdout).toMatch(/"state": "UPDATING"/);

    // No terminal to ask on: a cancel that would fail nodes never started is refused without --yes, saying how many.
    const refused = await runCli(['session', 'cancel', id, ...where]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      new RegExp(
        `cancelling ${id} fails 2 node\\(s\\) that were never started, and those of the step in flight \\(up to 2\\) not yet back,.*rollout session stop ${id}.*give --yes`,
      ),
    );

    const stop = await runCli(['session', 'stop', id, ...where]);
    // Its stderr is shown when it fails (a stop refused, a control plane that did not answer).
    expect({ ...stop, stderr: stop.code === 0 ? '' : stop.stderr }).toMatchObject({
      stderr: '',
      code: 0,
      stdout: expect.stringContaining(`upgrade ${id} is STOPPING: what is in flight finishes, nothing new starts, and it ends STOPPED`),
    });
    const watched = await runCliInProcess(['session', 'watch', id, ...where, '--json']);
    expect(JSON.parse(watched.stdout)).toMatchObject({ state: 'STOPPED', counts: { UPGRADED: 2, FAILED: 0, NOT_STARTED: 4 } });
    expect((await runCliInProcess(['session', 'stop', id, ...where])).code).toBe(1);

    // With --yes it is cancelled; nothing runs a stopped session, so the deletion rules apply when it is resumed.
    const cancelled = await runCliInProcess(['session', 'cancel', id, ...where, '--yes']);
    expect(cancelled).toMatchObject({ code: 0, stdout: expect.stringContaining(`upgrade ${id} is DELETING, but no execution runs it`) });

    // `session resume --detach` starts the execution that carries it on and returns at once, saying how to follow it.
    const resumed = await runCli(['session', 'resume', id, ...where, '--detach']);
    expect(resumed).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`upgrade ${id} resumed\n  watch:  rollout session watch ${id} --endpoint ${where[1]}`),
    });
  }, 600_000);

  it('--detach starts the session and returns at once; without a remote control plane it is refused', async () => {
    const started = await runCli([...upgradeArgs({ ...BUSY_SITE_UPGRADE, detach: true, json: true }), ...where]);
    expect(started.code).toBe(0);
    const { id, kind, executionArn } = JSON.parse(started.stdout) as { id: string; kind: string; executionArn: string };
    expect(kind).toBe('upgrade');
    expect(executionArn).toMatch(/:execution:RollingUpgrade:/);
    // It runs on without the process that started it, to its end (`session watch` follows it there; exit 2 until it has opened).
    // The serve runs on virtual time, so the session ends in moments: stopping a detached session is the test above.
    const watched = await until(async () => {
      const tried = await runCliInProcess(['session', 'watch', id, ...where, '--json']);
      return tried.code === 2 ? undefined : tried;
    }, 'the detached session');
    expect(JSON.parse(watched.stdout)).toMatchObject({ upgradeId: id, state: 'READY' });

    const local = await runCliInProcess(upgradeArgs({ ...BUSY_SITE_UPGRADE, site, detach: true }));
    expect(local).toMatchObject({ code: 2, stderr: expect.stringContaining('--detach needs --endpoint URL or --aws') });
  }, 600_000);
});
