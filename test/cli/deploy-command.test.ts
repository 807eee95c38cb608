import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCliInProcess } from '../support/cli';

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
    expect(result.stderr).toMatch(/maxParallelGroups/);
  });
});
