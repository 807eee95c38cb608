import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { buildDeploymentReport } from '../../../control-plane/reports/deployment-report';
import { loadSiteFile } from '../../../simulator';
import { startTestRuntime } from '../../support/embedded';

const examples = path.resolve(__dirname, '..', '..', '..', 'examples');
const strategyOf = async () => parse(await readFile(path.join(examples, 'strategies', 'shipyard-example.yaml'), 'utf8')) as unknown;

async function deploy(siteFile: string) {
  const runtime: EmbeddedRuntime = await startTestRuntime({ site: await loadSiteFile(path.join(examples, 'sites', siteFile)) });
  try {
    const run = await runtime.run('groupDeployment', { strategy: await strategyOf(), pollIntervalSeconds: 10 });
    const outcome = await run.outcome;
    const record = await runtime.deployments.getDeployment(run.id);
    return { outcome, report: await buildDeploymentReport(runtime.deployments, record!), site: runtime.simulator.state() };
  } finally {
    await runtime.close();
  }
}

describe("the seed's example strategy on the embedded engine", () => {
  it('deploys every group when all goes well', async () => {
    const { outcome, report, site } = await deploy('group-deployment-example.yaml');

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report.status).toBe('SUCCEEDED');
    expect(report.criticalGroupsFailed).toBe(false);
    for (const group of Object.values(report.groups)) expect(group.stage).toBe('DEPLOYED');
    expect(Object.values(report.nodes).every((stage) => stage === 'DEPLOYED')).toBe(true);
    // A node in two groups is submitted once.
    for (const node of Object.values(site.nodes)) expect(node.prepareCount).toBeLessThanOrEqual(1);
    expect(site.violations).toEqual([]);
  });

  it('fails the run when the ntp node fails to prepare: its dependants fail, other groups go on', async () => {
    const { outcome, report } = await deploy('group-deployment-ntp-prepare-fails.yaml');

    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toBe('CriticalGroupFailed');
    expect(outcome.cause).toMatch(/ntp-node/);
    expect(report.groups['ntp-node']).toMatchObject({ stage: 'FAILED' });
    expect(report.groups['ntp-node']!.failures[0]).toMatchObject({ criteria: 'minimum_successful_nodes' });
    expect(report.groups['control-nodes']).toMatchObject({ stage: 'FAILED', blockedBy: 'ntp-node' });
    expect(report.groups['monitoring-nodes']!.stage).toBe('DEPLOYED');
    expect(report.nodes['ntp01']).toBe('FAILED');
  });

  it('succeeds when a non-critical compute group misses its criteria at deploy', async () => {
    const { outcome, report } = await deploy('group-deployment-compute-deploy-fails.yaml');

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report.groups['compute-nodes-2']).toMatchObject({ stage: 'FAILED', critical: false });
    expect(report.groups['compute-nodes-2']!.failures[0]).toMatchObject({ criteria: 'percent_successful_nodes', needed: 50 });
    expect(report.groups['compute-nodes-1']!.stage).toBe('DEPLOYED');
  });
});
