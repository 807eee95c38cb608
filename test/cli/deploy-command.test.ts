import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCliInProcess, startCli } from '../support/cli';

const examples = path.resolve(__dirname, '..', '..', 'examples');
const strategy = path.join(examples, 'strategies', 'shipyard-example.yaml');
const site = (name: string) => path.join(examples, 'sites', name);

describe('rollout deploy', () => {
  it('deploys the example strategy and prints the result as JSON (exit 0)', async () => {
    const result = await runCliInProcess(['deploy', '--site', site('group-deployment-example.yaml'), '--strategy', strategy, '--json']);

    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      status: string;
      criticalGroupsFailed: boolean;
      groups: Record<string, { stage: string; critical: boolean; nodes: string[]; failures: unknown[] }>;
      nodes: Record<string, string>;
    };
    expect(report.status).toBe('SUCCEEDED');
    expect(report.criticalGroupsFailed).toBe(false);
    expect(report.groups['ntp-node']).toMatchObject({ stage: 'DEPLOYED', critical: true, nodes: ['ntp01'], failures: [] });
    expect(Object.values(report.nodes).every((stage) => stage === 'DEPLOYED')).toBe(true);
  });

  it('exits 1 when a critical group fails, with group and node summaries', async () => {
    const result = await runCliInProcess(['deploy', '--site', site('group-deployment-ntp-prepare-fails.yaml'), '--strategy', strategy]);

    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/FAILED \(critical groups failed: ntp-node, control-nodes\)/);
    expect(result.stdout).toMatch(/ntp-node\s+FAILED\s+critical\s+1 nodes\s+minimum_successful_nodes needed 1, got 0/);
    expect(result.stdout).toMatch(/control-nodes\s+FAILED\s+critical\s+\d+ nodes\s+blocked by ntp-node/);
    expect(result.stdout).toMatch(/FAILED\s+1: ntp01/);
  });

  it('deploys only the nodes given with --nodes', async () => {
    const result = await runCliInProcess(['deploy', '--site', site('group-deployment-example.yaml'), '--nodes', 'cmp101,cmp102', '--json']);

    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { groups: Record<string, { nodes: string[] }>; nodes: Record<string, string> };
    expect(Object.keys(report.groups)).toEqual(['default']);
    expect(report.nodes).toEqual({ cmp101: 'DEPLOYED', cmp102: 'DEPLOYED' });
  });

  it('exits 2 on an invalid strategy, naming the group and field, before starting anything', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-deploy-'));
    const bad = path.join(dir, 'strategy.yaml');
    await writeFile(bad, 'groups:\n  - name: a\n    critical: maybe\n    depends_on: []\n    selectors: []\n');
    const result = await runCliInProcess(['deploy', '--site', site('group-deployment-example.yaml'), '--strategy', bad]);

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/groups\[0\] \(a\)\.critical/);
  });

  it('exits 2 on a bad option value, naming the field', async () => {
    const result = await runCliInProcess(['deploy', '--site', site('group-deployment-example.yaml'), '--max-parallel-groups', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--max-parallel-groups must be at least 1/);
  });
});

describe('rollout session cancel and resume, for a deployment another process runs', () => {
  /** Two nodes, one at a time; each prepare takes 5 s and each deploy 5 s on the wall clock (--time-scale 1). */
  const slowSite = 'timing: {prepareSeconds: 5, deploySeconds: 5}\nnodes:\n  - {name: n1, nid: 1}\n  - {name: n2, nid: 2}\n';
  const strategyYaml = 'groups:\n  - {name: g, critical: true, depends_on: [], selectors: [{node_names: [n1, n2]}], strategy: {type: one_by_one}}\n';

  async function startSlowDeploy() {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-deploy-'));
    const siteFile = path.join(dir, 'site.yaml');
    const strategyFile = path.join(dir, 'strategy.yaml');
    await writeFile(siteFile, slowSite);
    await writeFile(strategyFile, strategyYaml);
    const dataDir = path.join(dir, 'data');
    const deploy = startCli([
      'deploy',
      '--site',
      siteFile,
      '--strategy',
      strategyFile,
      '--time-scale',
      '1',
      '--poll-interval',
      '1',
      '--json',
      '--data-dir',
      dataDir,
    ]);
    let deploymentId: string | undefined;
    const deadline = Date.now() + 60_000;
    while (!deploymentId && Date.now() < deadline) {
      const listed = await runCliInProcess(['session', 'list', '--kind', 'deployment', '--data-dir', dataDir, '--json']);
      deploymentId =
        listed.code === 0
          ? (JSON.parse(listed.stdout) as { deploymentId: string; status: string }[]).find((d) => d.status === 'RUNNING')?.deploymentId
          : undefined;
    }
    expect(deploymentId).toBeDefined();
    return { siteFile, dataDir, deploy, deploymentId: deploymentId! };
  }

  it('cancels it: the running process stops after the prepare in flight and prints it CANCELLED (exit 1)', async () => {
    const { dataDir, deploy, deploymentId } = await startSlowDeploy();
    const cancel = await runCliInProcess(['session', 'cancel', deploymentId, '--data-dir', dataDir]);
    expect(cancel).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/deployment .* is CANCELLING: the running deployment starts no group or batch any more/),
    });
    const finished = await deploy.done;
    expect(finished.code).toBe(1);
    const report = JSON.parse(finished.stdout) as { status: string; nodes: Record<string, string> };
    expect(report.status).toBe('CANCELLED');
    expect(report.nodes['n2']).toBe('NOT_STARTED');

    // On simulated time a deployment's creation is never shown as a simulated date: CREATED is the wall clock, marked (sim);
    // JSON gives the run's start as 0 seconds of simulated time, and the wall-clock date beside it.
    const table = await runCliInProcess(['session', 'list', '--kind', 'deployment', '--data-dir', dataDir]);
    expect(table.stdout).toMatch(new RegExp(`^${deploymentId} +deployment +CANCELLED +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ \\(sim\\) `, 'm'));
    const listed = JSON.parse((await runCliInProcess(['session', 'list', '--kind', 'deployment', '--data-dir', dataDir, '--json'])).stdout) as {
      createdAt: unknown;
      wallCreatedAt: string;
    }[];
    expect(listed[0]).toMatchObject({ createdAt: { secondsFromStart: 0, timeBase: 'simulated' }, simulatedTime: true });
    expect(Math.abs(Date.parse(listed[0]!.wallCreatedAt) - Date.now())).toBeLessThan(300_000);
  }, 120_000);

  it('resumes it after its process was killed, to the end, on a data directory', async () => {
    const { siteFile, dataDir, deploy, deploymentId } = await startSlowDeploy();
    deploy.child.kill('SIGKILL');
    expect((await deploy.done).code).toBeNull();

    const resumed = await runCliInProcess(['session', 'resume', deploymentId, '--data-dir', dataDir, '--site', siteFile, '--json']);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ deploymentId, status: 'SUCCEEDED', nodes: { n1: 'DEPLOYED', n2: 'DEPLOYED' } });
    const again = await runCliInProcess(['session', 'resume', deploymentId, '--data-dir', dataDir, '--site', siteFile]);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/has ended \(SUCCEEDED\): nothing to resume/) });
    const unknown = await runCliInProcess(['session', 'resume', 'no-such-id', '--data-dir', dataDir, '--site', siteFile]);
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringMatching(/no session with id 'no-such-id'/) });
  }, 120_000);
});
