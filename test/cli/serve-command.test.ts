import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { TEST_SITE_UPGRADE, upgradeArgs } from '../../scripts/upgrade-args';
import { runCli, runCliInProcess } from '../support/cli';
import { startServe, type RunningServe } from '../support/serve';
import { startProfiledSite } from '../support/simulator';

const names = ['x1000c0s0b0n0', 'x1000c0s0b0n1', 'x1000c0s1b0n0', 'x1000c0s1b0n1'];
/** The four nodes in the group `compute` of TEST_SITE_UPGRADE, each booting in a minute. */
const SITE_YAML = stringify({
  nodes: names.map((name, i) => ({ name, nid: i + 1 })),
  groups: { compute: names, upgrading: [], failed: [] },
  bootTemplates: ['cos-2.4'],
  timing: { bootSeconds: 60, returnSeconds: 10 },
});

describe('rollout serve, and a second process as its client', () => {
  let dir: string;
  let serve: RunningServe;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-serve-'));
    const site = path.join(dir, 'site.yaml');
    await writeFile(site, SITE_YAML);
    serve = await startServe(['--site', site, '--data-dir', path.join(dir, 'data')]);
  });
  afterAll(async () => {
    await serve?.stop(); // idempotent: the test stops it already
    await rm(dir, { recursive: true, force: true });
  });

  it('prints its endpoints as the first line, serves an upgrade started by `rollout upgrade --endpoint`, and stops on SIGTERM', async () => {
    expect(serve.endpoints).toEqual({
      stepFunctionsEndpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      dynamodbEndpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      region: 'local',
      tableName: 'rollout',
      stateMachines: {
        rollingUpgrade: 'arn:aws:states:local:000000000000:stateMachine:RollingUpgrade',
        groupDeployment: 'arn:aws:states:local:000000000000:stateMachine:GroupDeployment',
        taskGraph: 'arn:aws:states:local:000000000000:stateMachine:TaskGraph',
      },
      apiEndpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      schedulerEndpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      scheduleGroup: 'rollout',
      schedulerRoleArn: 'arn:aws:iam::000000000000:role/rollout-scheduler',
    });
    const endpoint = serve.endpoints.stepFunctionsEndpoint;

    const upgrade = await runCli(upgradeArgs({ ...TEST_SITE_UPGRADE, endpoint, json: true }));
    expect(upgrade.stderr).not.toContain('error');
    expect(upgrade.code).toBe(0);
    const report = JSON.parse(upgrade.stdout) as { upgradeId: string; completed: boolean; counts: Record<string, number> };
    expect(report).toMatchObject({ completed: true, counts: { UPGRADED: 4 } });

    const listed = await runCliInProcess(['session', 'list', '--endpoint', endpoint, '--kind', 'upgrade', '--json']);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { upgradeId: string }[]).map((s) => s.upgradeId)).toEqual([report.upgradeId]);
    const deployments = await runCliInProcess(['session', 'list', '--endpoint', endpoint, '--kind', 'deployment']);
    expect(deployments.stdout).toBe('no sessions\n');

    const got = await runCliInProcess(['session', 'get', report.upgradeId, '--endpoint', endpoint, '--json']);
    expect(JSON.parse(got.stdout)).toMatchObject({ upgradeId: report.upgradeId, completed: true });

    const stopped = await serve.stop();
    expect(stopped.code).toBe(0);
  });

  it('refuses options that belong to the served control plane, and an unreachable endpoint', async () => {
    const withSite = await runCliInProcess(upgradeArgs({ ...TEST_SITE_UPGRADE, endpoint: 'http://127.0.0.1:9', site: 'x.yaml' }));
    expect(withSite.code).toBe(2);
    expect(withSite.stderr).toContain('--site describe');
    const unreachable = await runCliInProcess(['session', 'list', '--endpoint', 'http://127.0.0.1:9']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach a rollout control plane at http://127.0.0.1:9');
    const nowhere = await runCliInProcess(['session', 'list']);
    expect(nowhere.code).toBe(2);
  });
});

describe('rollout serve --site-config: the served workflows drive the site a profile names', () => {
  it('upgrades the nodes of a separately running simulated site, reached over its HTTP APIs', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-serve-config-'));
    const { simulator, profile } = await startProfiledSite(names, 200, dir);
    let serve: RunningServe | undefined;
    try {
      serve = await startServe(['--site-config', profile]);
      const upgrade = await runCliInProcess(upgradeArgs({ ...TEST_SITE_UPGRADE, endpoint: serve.endpoints.stepFunctionsEndpoint, json: true }));
      expect(upgrade.code).toBe(0);
      expect(JSON.parse(upgrade.stdout)).toMatchObject({ completed: true, counts: { UPGRADED: 4 } });
      // The site itself shows the work: each node rebooted once, back in service.
      const state = simulator.state();
      for (const name of names) expect(state.nodes[name]).toMatchObject({ bootCount: 1 });
      expect(state.violations).toEqual([]);
      const scaled = await runCliInProcess(['serve', '--site-config', profile, '--time-scale', '10']);
      expect(scaled.code).toBe(2);
      expect(scaled.stderr).toContain('--time-scale goes with --site');
    } finally {
      await serve?.stop();
      await simulator.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('rollout session approve through a served control plane', () => {
  let dir: string;
  let serve: RunningServe;
  afterAll(async () => {
    await serve?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('wakes the execution parked for the approval with SendTaskSuccess, from a second process (--endpoint)', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-approve-'));
    const site = path.join(dir, 'site.yaml');
    await writeFile(site, SITE_YAML);
    serve = await startServe(['--site', site]);
    const endpoint = serve.endpoints.stepFunctionsEndpoint;
    const upgrade = runCli(upgradeArgs({ ...TEST_SITE_UPGRADE, endpoint, mode: 'window', maxUnavailable: 2, batches: 1, approval: 'each-batch', json: true }));

    // The session parks after batch 1: its token is stored and `session get` says what it waits for.
    let id: string | undefined;
    for (const deadline = Date.now() + 60_000; !id && Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      const listed = await runCliInProcess(['session', 'list', '--endpoint', endpoint, '--json']);
      const upgradeId = listed.code === 0 ? (JSON.parse(listed.stdout) as { upgradeId: string }[])[0]?.upgradeId : undefined;
      const got = upgradeId ? await runCliInProcess(['session', 'get', upgradeId, '--endpoint', endpoint]) : undefined;
      if (got?.stdout.includes('waiting for the approval of batch 2')) id = upgradeId;
    }
    expect(id).toBeDefined();

    const approved = await runCli(['session', 'approve', id!, '--endpoint', endpoint]);
    expect(approved).toMatchObject({ code: 0, stdout: `session ${id}: batch 2 approved\n`, stderr: '' });
    const finished = await upgrade;
    expect(finished.code).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({ completed: true, counts: { UPGRADED: 4 } });
  });
});

describe('rollout serve --dynamodb-port', () => {
  /** A port free a moment ago (the kernel's choice, let go again). */
  const freePort = () =>
    new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });

  it('serves the DynamoDB endpoint on the port given; a bad one is refused naming the option', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-serve-ddb-'));
    const site = path.join(dir, 'site.yaml');
    await writeFile(site, stringify({ nodes: names.map((name, i) => ({ name, nid: i + 1 })), groups: { compute: names }, bootTemplates: ['cos-2.4'] }));
    const port = await freePort();
    const serve = await startServe(['--site', site, '--dynamodb-port', String(port)]);
    try {
      expect(serve.endpoints.dynamodbEndpoint).toBe(`http://127.0.0.1:${port}`);
      // The sessions are there (a busy port is refused naming the option: cli-startup.test.ts).
      expect(await runCliInProcess(['session', 'list', '--endpoint', serve.endpoints.stepFunctionsEndpoint])).toMatchObject({
        code: 0,
        stdout: 'no sessions\n',
      });
    } finally {
      await serve.stop();
    }
    const bad = await runCliInProcess(['serve', '--site', site, '--dynamodb-port', 'x']);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("--dynamodb-port must be a port number (0-65535), got 'x'") });
    await rm(dir, { recursive: true, force: true });
  });
});
