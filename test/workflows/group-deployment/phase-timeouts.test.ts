import { startTestRuntime } from '../../support/embedded';
import { deploymentSite, groupOf, QUICK_POLL, runDeployment, type DeploymentNodeInput } from '../../support/deployment-sites';

/**
 * Simulated seconds a timed-out batch may overrun its timeout before the next one starts: the poll
 * that sees the timeout comes up to one poll interval (QUICK_POLL, backing off) after it.
 */
const SLACK_SECONDS = 60;

async function deploy(nodes: DeploymentNodeInput[], groups: Record<string, unknown>[], input: Record<string, unknown>) {
  const runtime = await startTestRuntime({ site: deploymentSite(nodes) });
  try {
    return await runDeployment(runtime, { strategy: { groups }, ...QUICK_POLL, ...input });
  } finally {
    await runtime.close();
  }
}

const seconds = (ms: number) => ms / 1000;

describe('phase timeouts: a hung node fails after the configured timeout and the deployment goes on', () => {
  it('a node whose prepare hangs fails after prepareTimeoutSeconds; the next node and group go on', async () => {
    const nodes = [{ name: 'p0' }, { name: 'hung', faults: { prepare: 'hang' as const } }, { name: 'p2' }, { name: 'next-n' }];
    const groups = [
      groupOf('g', ['p0', 'hung', 'p2'], { strategy: { type: 'one_by_one' }, success_criteria: { maximum_failed_nodes: 1 } }),
      groupOf('next', ['next-n'], { depends_on: ['g'] }),
    ];
    const { outcome, report, site, runs, record } = await deploy(nodes, groups, { prepareTimeoutSeconds: 120 });

    expect(outcome.status).toBe('SUCCEEDED');
    expect(record!.settings.prepareTimeoutSeconds).toBe(120);
    expect(report!.groups['g']).toMatchObject({ stage: 'DEPLOYED', failures: [] });
    expect(report!.groups['next']!.stage).toBe('DEPLOYED');
    expect(report!.nodes).toEqual({ p0: 'DEPLOYED', hung: 'FAILED', p2: 'DEPLOYED', 'next-n': 'DEPLOYED' });
    // Failed to prepare: never deployed.
    expect(site.nodes['hung']).toMatchObject({ prepareCount: 1, deployCount: 0 });

    const hung = runs.find((r) => r.node === 'hung' && r.phase === 'prepare')!;
    const after = runs.find((r) => r.node === 'p2' && r.phase === 'prepare')!;
    expect(hung.finishedAt).toBeUndefined();
    const waited = seconds(after.startedAt - hung.startedAt);
    expect(waited).toBeGreaterThanOrEqual(120);
    expect(waited).toBeLessThan(120 + SLACK_SECONDS);
  });

  it('a node whose deploy hangs fails after deployTimeoutSeconds; the next node goes on', async () => {
    const nodes = [{ name: 'd0' }, { name: 'hung', faults: { deploy: 'hang' as const } }, { name: 'd2' }];
    const groups = [
      groupOf('g', ['d0', 'hung', 'd2'], { critical: true, strategy: { type: 'one_by_one' }, success_criteria: { minimum_successful_nodes: 2 } }),
    ];
    const { outcome, report, site, runs } = await deploy(nodes, groups, { deployTimeoutSeconds: 200 });

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report!.nodes).toEqual({ d0: 'DEPLOYED', hung: 'FAILED', d2: 'DEPLOYED' });
    expect(site.nodes['hung']).toMatchObject({ prepareCount: 1, deployCount: 1 });

    const hung = runs.find((r) => r.node === 'hung' && r.phase === 'deploy')!;
    const after = runs.find((r) => r.node === 'd2' && r.phase === 'deploy')!;
    const waited = seconds(after.startedAt - hung.startedAt);
    expect(waited).toBeGreaterThanOrEqual(200);
    expect(waited).toBeLessThan(200 + SLACK_SECONDS);
  });

  it('a hang in a group submitted at once: the others count as done, the phase ends at the timeout', async () => {
    const nodes = [{ name: 'x0' }, { name: 'hung', faults: { prepare: 'hang' as const } }, { name: 'x2' }];
    const groups = [groupOf('g', ['x0', 'hung', 'x2'], { critical: true, success_criteria: { percent_successful_nodes: 66 } })];
    const { outcome, report, runs } = await deploy(nodes, groups, { prepareTimeoutSeconds: 150 });

    expect(outcome.status).toBe('SUCCEEDED');
    expect(report!.nodes).toEqual({ x0: 'DEPLOYED', hung: 'FAILED', x2: 'DEPLOYED' });
    const prepare = runs.filter((r) => r.phase === 'prepare');
    const deployRuns = runs.filter((r) => r.phase === 'deploy');
    expect(new Set(prepare.map((r) => r.action)).size).toBe(1);
    expect(deployRuns.map((r) => r.node)).toEqual(['x0', 'x2']);
    const waited = seconds(deployRuns[0]!.startedAt - prepare[0]!.startedAt);
    expect(waited).toBeGreaterThanOrEqual(150);
    expect(waited).toBeLessThan(150 + SLACK_SECONDS);
  });

  it('a timed-out node fails the criteria like any failure: the group fails, its deploy is skipped', async () => {
    const nodes = [{ name: 'y0' }, { name: 'hung', faults: { prepare: 'hang' as const } }];
    const groups = [groupOf('g', ['y0', 'hung'], { critical: true, success_criteria: { maximum_failed_nodes: 0 } })];
    const { outcome, message, report, site } = await deploy(nodes, groups, { prepareTimeoutSeconds: 60 });

    expect(outcome.error).toBe('CriticalGroupFailed');
    expect(message).toBe('Critical groups failed: g');
    expect(report!.groups['g']).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'maximum_failed_nodes', needed: 0, actual: 1 }] });
    expect(site.nodes['y0']).toMatchObject({ prepareCount: 1, deployCount: 0 });
  });
});
