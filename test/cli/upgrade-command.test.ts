import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { TEST_SITE_UPGRADE, type UpgradeFlags, upgradeArgs } from '../../scripts/upgrade-args';
import { runCli, runCliInProcess, startCli } from '../support/cli';

const names = ['x1000c0s0b0n0', 'x1000c0s0b0n1', 'x1000c0s1b0n0', 'x1000c0s1b0n1'];

function siteYaml(options: { busyFirst?: number; neverReturns?: string } = {}): string {
  return stringify({
    nodes: names.map((name, i) => ({
      name,
      nid: i + 1,
      ...(i === 0 && options.busyFirst ? { wlm: { state: 'ALLOCATED', busySeconds: options.busyFirst } } : {}),
      ...(options.neverReturns === name ? { faults: { returnToService: 'never' } } : {}),
    })),
    groups: { compute: names, upgrading: [], failed: [] },
    bootTemplates: ['cos-2.4'],
    timing: { bootSeconds: 60, returnSeconds: 10 },
  });
}

/** `rollout upgrade` of the site file `site` (TEST_SITE_UPGRADE's groups and template) with `flags`. */
const upgradeOf = (site: string, flags: UpgradeFlags = {}) => upgradeArgs({ ...TEST_SITE_UPGRADE, site, ...flags });

describe('rollout upgrade', () => {
  let dir: string;
  let site: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-cli-'));
    site = path.join(dir, 'site.yaml');
    await writeFile(site, siteYaml({ neverReturns: 'x1000c0s1b0n1' }));
  });

  it('runs a session to completion and prints it as JSON, with the site state written out', async () => {
    const stateFile = path.join(dir, 'state.json');
    const result = await runCliInProcess(upgradeOf(site, { wlmTimeout: 300, json: true, siteStateOut: stateFile }));

    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as Record<string, unknown> & { nodes: Record<string, { status: string; reason?: string }> };
    expect(report).toMatchObject({
      state: 'READY',
      completed: true,
      startingLabel: 'compute',
      upgradingLabel: 'upgrading',
      failedLabel: 'failed',
      upgradeStepSize: 2,
      upgradeTemplateId: 'cos-2.4',
      workloadManagerType: 'slurm',
    });
    expect(typeof report.upgradeId).toBe('string');
    expect(report.messages).toContain('Upgrade Session Completed');
    expect(report.nodes['x1000c0s0b0n0']).toMatchObject({ status: 'UPGRADED' });
    expect(report.nodes['x1000c0s1b0n1']).toMatchObject({ status: 'FAILED', reason: 'upgrading-time-out-wlm-waiting' });

    const state = JSON.parse(await readFile(stateFile, 'utf8')) as { groups: Record<string, string[]>; nodes: Record<string, Record<string, unknown>> };
    expect(state.groups.failed).toEqual(['x1000c0s1b0n1']);
    expect(state.nodes['x1000c0s0b0n0']).toEqual({
      wlmState: 'IDLE',
      bootCount: 1,
      initialBusySeconds: 0,
      outOfService: [[expect.any(Number), expect.any(Number)]],
    });
    expect(state.nodes['x1000c0s1b0n1']).toMatchObject({ wlmReason: `upgrading-time-out-wlm-waiting ${report.upgradeId}`, bootCount: 1 });
  });

  it('prints a readable summary without --json', async () => {
    const result = await runCliInProcess(upgradeOf(site, { stepSize: 4, wlmTimeout: 300 }));
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/completed \(state READY\)/);
    expect(result.stdout).toMatch(/upgraded 3 \| failed 1/);
    expect(result.stdout).toMatch(/x1000c0s1b0n1\s+upgrading-time-out-wlm-waiting/);
  });

  it.each([
    [['--step-size', '0'], /--step-size must be at least 1/],
    [['--step-size', 'two'], /--step-size/],
    [['--step-size', '2', '--wlm', 'pbs'], /--wlm must be one of/],
    [['--step-size', '2', '--template', 'cos-9'], /--template: boot template 'cos-9' does not exist: the boot service has cos-2\.4$/m],
  ])('exits 2 on invalid input %j, naming the flag', async (extra, message) => {
    const args = [...upgradeOf(site, { stepSize: undefined }), ...extra];
    const result = await runCliInProcess(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('runs mode window from the kebab-case options; the report carries the controls and the simulated makespan', async () => {
    const result = await runCliInProcess(
      upgradeOf(site, {
        wlmTimeout: 300,
        mode: 'window',
        maxUnavailable: '50%',
        maxUnavailablePerRack: 2,
        batches: '1,2',
        json: true,
        healthCheck: 'ssh {node} /usr/sbin/nhc',
        healthCheckTimeout: 120,
      }),
    );
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as Record<string, unknown> & { makespanSeconds: number };
    expect(report).toMatchObject({
      state: 'READY',
      completed: true,
      controls: {
        mode: 'window',
        maxUnavailable: '50%',
        maxUnavailablePerRack: 2,
        batches: [1, 2],
        order: 'plan',
        healthCheck: { command: 'ssh {node} /usr/sbin/nhc', timeoutSeconds: 120 },
      },
    });
    // At least one boot (60 s) and return (10 s) in each of the two batches and the window after them.
    expect(report.makespanSeconds).toBeGreaterThanOrEqual(3 * 70);
    expect(report.nodes).toMatchObject({
      x1000c0s0b0n0: { status: 'UPGRADED' },
      x1000c0s1b0n1: { status: 'FAILED', reason: 'upgrading-time-out-wlm-waiting' },
    });
  });

  it('shows the mode and the makespan in the summary, and exits 1 with state HALTED once maxFailed is exceeded', async () => {
    const result = await runCliInProcess(upgradeOf(site, { stepSize: 1, wlmTimeout: 300, mode: 'window', maxUnavailable: 1, maxFailed: 0 }));
    // The last node in plan order fails: the budget of 0 is exceeded only then, with nothing left to start.
    expect(result.stdout).toMatch(/mode window: at most 1 out of service, 0 drained ahead, order plan, makespan (\d+h )?\d+m( \d+s)?$/m);
    expect(result.stdout).toMatch(/halted \(state HALTED\)/);
    expect(result.stdout).toMatch(/halted: 1 failed nodes exceed maxFailed \(0\)/);
    expect(result.code).toBe(1);
  });

  it.each([
    [['--mode', 'window', '--max-unavailable', 'many'], /--max-unavailable/],
    [['--mode', 'window', '--batches', '1,x'], /batches/],
    [['--drain-ahead', '4'], /--drain-ahead applies to mode 'window' only/],
    [['--mode', 'sideways'], /mode must be one of: lockstep, window/],
    [['--mode', 'window', '--maintenance-window', '0 22 * * *,0'], /durationMinutes/],
    [['--approval', 'each-batch'], /--approval in mode 'lockstep' is not supported by the workflow yet: it runs in mode 'window' \(--mode window\)/],
    [
      ['--maintenance-window', '0 22 * * *,60'],
      /--maintenance-window: maintenance windows in mode 'lockstep' is not supported by the workflow yet: it runs in mode 'window' \(--mode window\)/,
    ],
    // EventBridge's forms are for `rollout schedule`: the refusal says which cron a window takes.
    [
      ['--mode', 'window', '--maintenance-window', 'cron(0 22 * * ? *),60'],
      /--maintenance-window #1 \(cron\): invalid cron 'cron\(0 22 \* \* \? \*\)': .*; a maintenance window takes a 5-field cron: minute hour day-of-month month day-of-week, e\.g\. '0 22 \* \* \*' \(EventBridge's cron\(\.\.\.\) and rate\(\.\.\.\) are for `rollout schedule --expression`\)/,
    ],
    [['--health-check', '/usr/sbin/nhc'], /--health-check must name the node to check as \{node\}/],
    [['--health-check-timeout', '60'], /--health-check-timeout bounds the health check command: give --health-check too/],
    [
      ['--halt-on-outside-failures'],
      /--halt-on-outside-failures: halting on failures outside the plan in mode 'lockstep' is not supported by the workflow yet/,
    ],
  ])('exits 2 on invalid window options %j, naming the flag', async (extra, message) => {
    const result = await runCliInProcess([...upgradeOf(site), ...extra]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('refuses a starting group the site does not have (exit 2, naming it), and a case variant of one, naming both', async () => {
    const missing = await runCliInProcess(upgradeOf(site, { startingLabel: 'nosuch' }));
    expect({ code: missing.code, stderr: missing.stderr }).toEqual({
      code: 2,
      stderr: expect.stringMatching(
        /--starting-label: no group 'nosuch' in the site's inventory \(create it first, or ask to wait until it exists: --wait-for-groups\)/,
      ),
    });
    const variant = await runCliInProcess(upgradeOf(site, { startingLabel: 'Compute', waitForGroups: true }));
    expect({ code: variant.code, stderr: variant.stderr }).toEqual({
      code: 2,
      stderr: expect.stringMatching(/--starting-label: no group 'Compute' in the site's inventory, but there is 'compute'/),
    });
  });

  it("with --wait-for-groups, starts on a missing group and shows the workflow's message at once, and once", async () => {
    const message = "Processing step 1 in stage STARTING failed - failed to obtain Node Group named 'nosuch'";
    const { child, done } = startCli(upgradeOf(site, { startingLabel: 'nosuch', waitForGroups: true }));
    let seen = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      const first = !seen.includes(message);
      seen += chunk.toString();
      // Let it retry a while (virtual time: many retries), then interrupt it as an operator would.
      if (first && seen.includes(message)) setTimeout(() => child.kill('SIGINT'), 1000);
    });
    const result = await done;
    expect(result.stderr.split(message)).toHaveLength(2);
    // Ctrl-C of the embedded run stops the session (it no longer cancels it).
    expect(result.stderr.indexOf(message)).toBeLessThan(result.stderr.indexOf('stopping upgrade'));
    expect(result.stdout).toMatch(/stopped \(state STOPPED\)/);
  }, 180_000);

  it('exits 2 on a bad site file, naming the path of the problem', async () => {
    const bad = path.join(dir, 'bad-site.yaml');
    await writeFile(bad, siteYaml().replace('nid: 2', 'nid: 2\n    colour: blue'));
    const result = await runCliInProcess(upgradeOf(bad));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/nodes\[1\]\.colour/);
  });
});

describe('rollout session, from a second process', () => {
  it('lists, cancels and shows a session that another rollout process is running', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-cli-'));
    const site = path.join(dir, 'site.yaml');
    await writeFile(site, siteYaml({ busyFirst: 1_000_000 }));
    const dataDir = path.join(dir, 'data');
    const upgrade = startCli(upgradeOf(site, { json: true, dataDir }));

    // The session appears to a second process while the first one runs it. The first process's cold
    // start (tsx, dynalite, the engine, the simulator) took 21 to 29 s on a loaded 2-core host: wait
    // while it runs, not a fixed 30 s; the listing in a loop must not keep the directory from it.
    let upgradeId: string | undefined;
    let exited = false;
    void upgrade.done.then(() => (exited = true));
    for (const deadline = Date.now() + 120_000; !upgradeId && !exited && Date.now() < deadline; await sleep(200)) {
      const listed = await runCliInProcess(['session', 'list', '--data-dir', dataDir, '--json']);
      const sessions = listed.code === 0 ? (JSON.parse(listed.stdout) as { upgradeId: string; stage: string }[]) : [];
      upgradeId = sessions.find((s) => s.stage === 'QUIESCING')?.upgradeId;
    }
    expect({ upgradeId, exited }).toMatchObject({ upgradeId: expect.any(String), exited: false });

    const cancel = await runCli(['session', 'cancel', upgradeId!, '--data-dir', dataDir, '--json']);
    expect({ ...cancel, stdout: JSON.parse(cancel.stdout) as unknown }).toEqual({
      code: 0,
      stdout: { id: upgradeId, kind: 'upgrade', state: 'DELETING', running: true },
      stderr: '',
    });

    const finished = await upgrade.done;
    expect(finished.code).toBe(1); // cancelled: not completed
    expect(JSON.parse(finished.stdout)).toMatchObject({ upgradeId, state: 'DELETED', completed: false });

    // With the first process gone, the session is read from disk.
    const shown = await runCliInProcess(['session', 'get', upgradeId!, '--data-dir', dataDir, '--json']);
    expect(shown.code).toBe(0);
    const report = JSON.parse(shown.stdout) as { state: string; counts: Record<string, number> };
    expect(report.state).toBe('DELETED');
    expect(report.counts.FAILED).toBe(0);

    const unknown = await runCliInProcess(['session', 'get', 'no-such-id', '--data-dir', dataDir]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(`error: no session with id 'no-such-id' (see 'rollout session list --data-dir ${dataDir}')\n`);
    // Every command that takes an id says the same.
    for (const command of ['stop', 'cancel', 'status', 'watch']) {
      const tried = await runCliInProcess(['session', command, 'no-such-id', '--data-dir', dataDir]);
      expect({ code: tried.code, stderr: tried.stderr }).toEqual({
        code: 2,
        stderr: expect.stringMatching(
          new RegExp(
            `^error: no (session|upgrade, deployment or task run) with id 'no-such-id' \\(see 'rollout session list --data-dir ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'\\)\n$`,
          ),
        ),
      });
    }
  }, 180_000);
});

describe('rollout session pause, approve and resume, from a second process (--data-dir)', () => {
  it("parks the running window for its operator; approve and resume wake it through the owner's Step Functions endpoint", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-cli-'));
    const site = path.join(dir, 'site.yaml');
    await writeFile(site, siteYaml());
    const dataDir = path.join(dir, 'data');
    const upgrade = startCli(upgradeOf(site, { mode: 'window', maxUnavailable: 2, batches: 1, approval: 'each-batch', json: true, dataDir }));

    const shown = async (id: string) => (await runCliInProcess(['session', 'get', id, '--data-dir', dataDir])).stdout;
    let upgradeId: string | undefined;
    for (const deadline = Date.now() + 60_000; !upgradeId && Date.now() < deadline; ) {
      const listed = await runCliInProcess(['session', 'list', '--data-dir', dataDir, '--json']);
      const id = listed.code === 0 ? (JSON.parse(listed.stdout) as { upgradeId: string }[])[0]?.upgradeId : undefined;
      if (id && (await shown(id)).includes('waiting for the approval of batch 2')) upgradeId = id;
    }
    expect(upgradeId).toBeDefined();

    // Paused while parked, then approved: the approval is kept, and `session get` says paused; nothing starts.
    expect((await runCliInProcess(['session', 'pause', upgradeId!, '--data-dir', dataDir])).stdout).toMatch(/paused: no new node starts/);
    // The same as JSON, from a process of its own.
    const pausedJson = await runCli(['session', 'pause', upgradeId!, '--data-dir', dataDir, '--json']);
    expect({ ...pausedJson, stdout: JSON.parse(pausedJson.stdout) as unknown }).toEqual({
      code: 0,
      stdout: { id: upgradeId, action: 'pause', running: true },
      stderr: '',
    });
    expect(await runCliInProcess(['session', 'approve', upgradeId!, '--data-dir', dataDir])).toMatchObject({
      code: 0,
      stdout: `session ${upgradeId}: batch 2 approved\n`,
      stderr: '',
    });
    expect(await shown(upgradeId!)).toMatch(/paused by its operator: no new node starts until: rollout session resume /);

    const resumed = await runCliInProcess(['session', 'resume', upgradeId!, '--data-dir', dataDir]);
    expect(resumed).toMatchObject({ code: 0, stdout: `session ${upgradeId} resumed: the running upgrade starts new nodes again\n`, stderr: '' });
    const finished = await upgrade.done;
    expect(finished.code).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({ upgradeId, completed: true, counts: { UPGRADED: 4 } });
  }, 150_000);
});

/**
 * An upgrade of a busy site run by a CLI process, killed (SIGKILL) once its session is UPDATING and its site
 * recorded: the site
 * file, the data directory the session is left in, and its id.
 */
async function killedMidUpgrade(): Promise<{ site: string; dataDir: string; upgradeId: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-cli-'));
  const site = path.join(dir, 'site.yaml');
  await writeFile(site, siteYaml({ busyFirst: 1_000_000 }));
  const dataDir = path.join(dir, 'data');
  const upgrade = startCli(upgradeOf(site, { quiesceTimeout: 7200, json: true, dataDir }));

  // Virtual time runs fast: kill it at whatever stage it is in while it runs.
  let upgradeId: string | undefined;
  const deadline = Date.now() + 60_000;
  while (!upgradeId && Date.now() < deadline) {
    const listed = await runCliInProcess(['session', 'list', '--data-dir', dataDir, '--json']);
    const sessions = listed.code === 0 ? (JSON.parse(listed.stdout) as { upgradeId: string; state: string }[]) : [];
    upgradeId = sessions.find((s) => s.state === 'UPDATING')?.upgradeId;
  }
  expect(upgradeId).toBeDefined();
  // The run records its site in the data directory once it started (the hints of later commands name it): a moment
  // after its session exists, which a loaded host can stretch.
  const recorded = async () => (await readFile(path.join(dataDir, 'run-sites.json'), 'utf8').catch(() => '')).includes(upgradeId!);
  while (!(await recorded()) && Date.now() < deadline) await sleep(20);
  upgrade.child.kill('SIGKILL');
  expect((await upgrade.done).code).toBeNull();
  return { site, dataDir, upgradeId: upgradeId! };
}

describe('rollout session resume', () => {
  it('takes over a session whose process was killed mid-step and runs it to its end', async () => {
    const { site, dataDir, upgradeId } = await killedMidUpgrade();

    const resumed = await runCliInProcess(['session', 'resume', upgradeId, '--data-dir', dataDir, '--site', site, '--json']);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/step 2 of 2 COMPLETE: 4\/4 nodes done/);
    // The simulated site restarted fresh with the new process: whatever the dead one did to it is gone, so only the totals are sure.
    const report = JSON.parse(resumed.stdout) as { upgradeId: string; state: string; completed: boolean; counts: Record<string, number> };
    expect(report).toMatchObject({ upgradeId, state: 'READY', completed: true });
    expect((report.counts.FAILED ?? 0) + (report.counts.UPGRADED ?? 0)).toBe(4);

    const unknown = await runCliInProcess(['session', 'resume', 'no-such-id', '--data-dir', dataDir, '--site', site]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no session with id 'no-such-id'/);
  }, 150_000);

  it('a session stopped after its process was killed carries on with one resume (the stop withdrawn), to READY', async () => {
    const { site, dataDir, upgradeId } = await killedMidUpgrade();

    const stop = await runCliInProcess(['session', 'stop', upgradeId, '--data-dir', dataDir]);
    expect(stop).toMatchObject({ code: 0, stderr: '' });
    expect(stop.stdout).toContain(`upgrade ${upgradeId} is STOPPING`);
    // The resume it names is whole: the data directory, and the site the killed run used (recorded there).
    expect(stop.stdout).toContain(`carry it on with: rollout session resume ${upgradeId} --data-dir ${dataDir} --site ${site}\n`);

    // One resume: it used to finish the stop (STOPPED, exit 1) and a second resume was needed.
    const resumed = await runCliInProcess(['session', 'resume', upgradeId, '--data-dir', dataDir, '--site', site, '--json']);
    expect(resumed.code).toBe(0);
    const report = JSON.parse(resumed.stdout) as { upgradeId: string; state: string; completed: boolean; counts: Record<string, number> };
    expect(report).toMatchObject({ upgradeId, state: 'READY', completed: true });
    expect((report.counts.FAILED ?? 0) + (report.counts.UPGRADED ?? 0)).toBe(4);
  }, 150_000);
});
