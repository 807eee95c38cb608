import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startServedControlPlane, type ServedControlPlane } from '../../local/serve';
import { runCli, runCliInProcess } from '../support/cli';
import { buildSite, upgradeRequest } from '../support/sites';

describe('rollout schedule and rollout events against a served control plane', () => {
  let dir: string;
  let served: ServedControlPlane;
  let url: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-schedule-cli-'));
    served = await startServedControlPlane({ site: { kind: 'simulated', definition: buildSite(2) } });
    url = served.endpoints.stepFunctionsEndpoint;
  });
  afterAll(async () => {
    await served.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates, lists and deletes a schedule', async () => {
    const request = path.join(dir, 'upgrade.json');
    await writeFile(request, JSON.stringify(upgradeRequest()));
    // Far ahead of the control plane's clock: nothing fires while the test looks.
    const created = await runCliInProcess([
      'schedule',
      'create',
      'weekly',
      '--upgrade',
      request,
      '--expression',
      'cron(0 3 ? * SUN 2099)',
      '--time-zone',
      'Europe/Paris',
      '--endpoint',
      url,
    ]);
    expect(created).toMatchObject({ code: 0, stdout: expect.stringContaining('created arn:aws:scheduler:local:000000000000:schedule/rollout/weekly') });
    const listed = await runCliInProcess(['schedule', 'list', '--endpoint', url, '--json']);
    expect(JSON.parse(listed.stdout)).toEqual([
      { name: 'weekly', kind: 'upgrade', state: 'ENABLED', expression: 'cron(0 3 ? * SUN 2099)', timeZone: 'Europe/Paris' },
    ]);
    // As a table with its header.
    expect((await runCliInProcess(['schedule', 'list', '--endpoint', url])).stdout).toBe(
      ['NAME    KIND     STATE    EXPRESSION              TIME ZONE', 'weekly  upgrade  ENABLED  cron(0 3 ? * SUN 2099)  Europe/Paris', ''].join('\n'),
    );
    expect(await runCliInProcess(['schedule', 'delete', 'weekly', '--endpoint', url])).toMatchObject({ code: 0, stdout: 'deleted weekly\n' });
    expect(await runCliInProcess(['schedule', 'delete', 'weekly', '--endpoint', url])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("no schedule named 'weekly'"),
    });
  });

  it('says what it created and deleted as JSON with --json (as processes)', async () => {
    const request = path.join(dir, 'upgrade-json.json');
    await writeFile(request, JSON.stringify(upgradeRequest()));
    const created = await runCli(['schedule', 'create', 'monthly', '--upgrade', request, '--expression', 'cron(0 3 1 * ? 2099)', '--endpoint', url, '--json']);
    expect({ ...created, stdout: JSON.parse(created.stdout) as unknown }).toEqual({
      code: 0,
      stdout: {
        name: 'monthly',
        arn: 'arn:aws:scheduler:local:000000000000:schedule/rollout/monthly',
        kind: 'upgrade',
        expression: 'cron(0 3 1 * ? 2099)',
        timeZone: 'UTC',
      },
      stderr: '',
    });
    const deleted = await runCli(['schedule', 'delete', 'monthly', '--endpoint', url, '--json']);
    expect({ ...deleted, stdout: JSON.parse(deleted.stdout) as unknown }).toEqual({ code: 0, stdout: { name: 'monthly', deleted: true }, stderr: '' });
  });

  it('refuses a bad request naming the field, and a schedule without a running control plane', async () => {
    const request = path.join(dir, 'bad.yaml');
    await writeFile(request, 'pollIntervalSeconds: soon\n');
    const refused = await runCliInProcess(['schedule', 'create', 'bad', '--deployment', request, '--expression', 'rate(1 day)', '--endpoint', url]);
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('pollIntervalSeconds') });
    expect(await runCliInProcess(['schedule', 'list'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--endpoint URL') });
  });

  it('rollout events shows the status events of a run, readable or as JSON lines', async () => {
    const run = await served.runtime.run('rollingUpgrade', upgradeRequest());
    await run.outcome;
    const readable = await runCliInProcess(['events', '--endpoint', url]);
    expect(readable.code).toBe(0);
    // On a simulated site an event's instant is shown from its run's start, never as a date; steps count from 1.
    expect(readable.stdout).toContain(`+0s (simulated)  Session Started  upgrade ${run.id}`);
    expect(readable.stdout).toMatch(/^\+\S+( \S+)? \(simulated\) {2}Step Started {2}upgrade \S+ {2}step 1 of \d+/m);
    expect(readable.stdout).not.toMatch(/\d{4}-\d\d-\d\dT/);
    expect(readable.stdout).toContain('Step Finished');
    expect(readable.stdout).toContain('COMPLETED (READY)');
    const json = await runCliInProcess(['events', '--endpoint', url, '--json']);
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { detailType: string; detail: { sessionId: string; at: unknown; timeBase?: string } });
    expect(lines.map((line) => line.detailType).at(-1)).toBe('Rollout Session Finished');
    const ofRun = lines.filter((line) => line.detail.sessionId === run.id);
    expect(ofRun[0]!.detail).toMatchObject({ at: { secondsFromStart: 0, timeBase: 'simulated' }, timeBase: 'simulated' });
    for (const line of ofRun) expect(line.detail.at).toEqual({ secondsFromStart: expect.any(Number), timeBase: 'simulated' });
    expect(await runCliInProcess(['events'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--data-dir DIR and --endpoint URL') });
  });
});
