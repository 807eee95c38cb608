import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { causeMessage } from '../../../control-plane/execution-cause';
import { buildDeploymentReport } from '../../../control-plane/reports/deployment-report';
import { eventually, startTestRuntime } from '../../support/embedded';
import { deploymentNodeRuns, deploymentSite, groupOf, namedNodes, namesOf, QUICK_POLL, type DeploymentNodeInput } from '../../support/deployment-sites';

/** Cancel (the request the workflow picks up at its next increment) and resume (a new execution from the store) of group deployments. */

const A = namedNodes('a', 3);
const B = namedNodes('b', 2);
// Group a one node at a time (three prepares, then three deploys); b after it.
const GROUPS = [groupOf('a', namesOf(A), { critical: true, strategy: { type: 'one_by_one' } }), groupOf('b', namesOf(B), { depends_on: ['a'] })];

async function withRuntime(nodes: DeploymentNodeInput[], test: (runtime: EmbeddedRuntime) => Promise<void>): Promise<void> {
  const runtime = await startTestRuntime({ site: deploymentSite(nodes) });
  try {
    await test(runtime);
  } finally {
    await runtime.close();
  }
}

/** Waits until the deployment's site actions include `count` node runs (started, finished or not). */
function runsStarted(runtime: EmbeddedRuntime, id: string, count: number) {
  return eventually(runtime, async () => (deploymentNodeRuns(runtime, id).length >= count ? true : undefined), `${count} node run(s)`);
}

/** Every execution of the three group-deployment machines still running, stopped as if their process died. */
async function killDeployment(runtime: EmbeddedRuntime): Promise<void> {
  await runtime.clock.busy(async () => {
    for (const name of ['GroupDeployment', 'DeployGroup', 'RunNodeBatches'] as const) {
      for (const execution of runtime.engine.listExecutions(runtime.stateMachineArns[name])) {
        if (execution.status === 'RUNNING') await runtime.engine.stop(execution.executionArn, 'ProcessDied');
      }
    }
  });
}

describe('cancelling a group deployment', () => {
  it('lets the batch in flight finish, starts no batch or group after it, and ends CANCELLED naming what it left', async () => {
    await withRuntime([...A, ...B], async (runtime) => {
      const run = await runtime.run('groupDeployment', { strategy: { groups: GROUPS }, ...QUICK_POLL });
      await runsStarted(runtime, run.id, 2);
      const cancelled = await runtime.clock.busy(() => runtime.cancel(run.id));
      expect(cancelled).toEqual({ id: run.id, kind: 'deployment', state: 'CANCELLING', running: true });

      const outcome = await run.outcome;
      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.output).toMatchObject({ status: 'CANCELLED', cause: 'Deployment cancelled: 0 of 2 group(s) finished; not started: a, b' });
      const record = await runtime.deployments.getDeployment(run.id);
      expect(record!.status).toBe('CANCELLED');
      // The two prepares that had started finished and count; the third never started; the group was not judged.
      const runs = deploymentNodeRuns(runtime, run.id);
      expect(runs.map((r) => `${r.phase} ${r.node} ${r.finishedAt !== undefined}`)).toEqual(['prepare a00 true', 'prepare a01 true']);
      const report = await buildDeploymentReport(runtime.deployments, record!);
      expect(report.nodes).toEqual({ a00: 'PREPARED', a01: 'PREPARED', a02: 'NOT_STARTED', b00: 'NOT_STARTED', b01: 'NOT_STARTED' });
      expect(report.groups['a']).toMatchObject({ stage: 'NOT_STARTED', failures: [] });
      expect(runtime.simulator.state().violations).toEqual([]);

      const finished = (await runtime.events.read()).filter((e) => e.detail.sessionId === run.id && e.detailType === 'Rollout Session Finished');
      expect(finished.map((e) => e.detail)).toEqual([expect.objectContaining({ outcome: 'CANCELLED', state: 'CANCELLED' })]);
      await expect(runtime.cancel(run.id)).rejects.toMatchObject({ name: 'SessionNotCancellableError', state: 'CANCELLED' });
    });
  });

  it('judges a phase whose batches had all started, deploys nothing after it, and leaves the group PREPARED', async () => {
    await withRuntime([...A, ...B], async (runtime) => {
      const run = await runtime.run('groupDeployment', { strategy: { groups: GROUPS }, ...QUICK_POLL });
      await runsStarted(runtime, run.id, 3);
      await runtime.clock.busy(() => runtime.cancel(run.id));
      const outcome = await run.outcome;
      expect(outcome.output).toMatchObject({
        status: 'CANCELLED',
        cause: 'Deployment cancelled: 0 of 2 group(s) finished; prepared, not deployed: a; not started: b',
      });
      const report = await buildDeploymentReport(runtime.deployments, (await runtime.deployments.getDeployment(run.id))!);
      expect(report.groups['a']!.stage).toBe('PREPARED');
      expect(deploymentNodeRuns(runtime, run.id).every((r) => r.phase === 'prepare' && r.group === 'a')).toBe(true);
    });
  });

  it('waits for an action in flight to end (here: its phase timeout), records it, then ends CANCELLED', async () => {
    const nodes = [{ name: 'h0', faults: { prepare: 'hang' as const } }, { name: 'h1' }];
    await withRuntime(nodes, async (runtime) => {
      const groups = [groupOf('g', ['h0', 'h1'], { strategy: { type: 'one_by_one' } })];
      const run = await runtime.run('groupDeployment', { strategy: { groups }, prepareTimeoutSeconds: 300, ...QUICK_POLL });
      await runsStarted(runtime, run.id, 1);
      await runtime.clock.busy(() => runtime.cancel(run.id));
      expect((await run.outcome).output).toMatchObject({ status: 'CANCELLED' });
      const report = await buildDeploymentReport(runtime.deployments, (await runtime.deployments.getDeployment(run.id))!);
      expect(report.nodes).toEqual({ h0: 'FAILED', h1: 'NOT_STARTED' });
      expect(deploymentNodeRuns(runtime, run.id).map((r) => r.node)).toEqual(['h0']);
    });
  });

  it('from the console: an execution started with {cancelDeploymentId} writes the request and ends; the running one ends CANCELLED', async () => {
    await withRuntime([...A, ...B], async (runtime) => {
      const run = await runtime.run('groupDeployment', { strategy: { groups: GROUPS }, ...QUICK_POLL });
      await runsStarted(runtime, run.id, 1);
      const console = await runtime.clock.busy(() => runtime.run('groupDeployment', { cancelDeploymentId: run.id }));
      const request = await console.outcome;
      expect(request).toMatchObject({ status: 'SUCCEEDED', output: { cancelRequested: { id: run.id, kind: 'deployment', state: 'CANCELLING' } } });
      // The cancel execution made no deployment of its own.
      expect(await runtime.deployments.getDeployment(console.id)).toBeUndefined();
      expect((await run.outcome).output).toMatchObject({ status: 'CANCELLED' });

      const unknown = await runtime.run('groupDeployment', { cancelDeploymentId: 'no-such-deployment' });
      expect(await unknown.outcome).toMatchObject({ status: 'FAILED', error: 'DeploymentNotFoundError' });
      const ended = await runtime.run('groupDeployment', { cancelDeploymentId: run.id });
      expect(await ended.outcome).toMatchObject({ status: 'FAILED', error: 'SessionNotCancellableError' });
      const bad = await runtime.run('groupDeployment', { cancelDeploymentId: 7, strategy: {} });
      const refused = await bad.outcome;
      expect(refused.error).toBe('InvalidInputError');
      expect(causeMessage(refused)).toMatch(/cancelDeploymentId: must be a session id.*strategy: unknown key/);
    });
  });
});

describe('resuming a group deployment whose execution died', () => {
  it('mid-prepare: reads back the actions that ran instead of running them again, and finishes every group', async () => {
    await withRuntime([...A, ...B], async (runtime) => {
      const run = await runtime.run('groupDeployment', { strategy: { groups: GROUPS }, ...QUICK_POLL });
      await runsStarted(runtime, run.id, 2);
      await killDeployment(runtime);
      expect((await run.outcome).status).toBe('ABORTED');
      expect((await runtime.deployments.getDeployment(run.id))!.status).toBe('RUNNING');

      const resumed = await runtime.run('groupDeployment', { resumeDeploymentId: run.id });
      expect(await resumed.outcome).toMatchObject({ status: 'SUCCEEDED', output: { deploymentId: run.id, status: 'SUCCEEDED' } });
      const report = await buildDeploymentReport(runtime.deployments, (await runtime.deployments.getDeployment(run.id))!);
      expect(report.status).toBe('SUCCEEDED');
      expect(Object.values(report.nodes)).toEqual(Array(5).fill('DEPLOYED'));
      // Each node prepared once and deployed once, no two actions on a node at once.
      const site = runtime.simulator.state();
      for (const node of [...namesOf(A), ...namesOf(B)])
        expect({ node, prepares: site.nodes[node]!.prepareCount, deploys: site.nodes[node]!.deployCount }).toEqual({ node, prepares: 1, deploys: 1 });
      expect(site.violations).toEqual([]);
      expect(await runtime.deployments.getDeployment(resumed.id)).toBeUndefined();
    });
  });

  it('mid-deploy: the group left PREPARED goes on with its deploy, not its prepare', async () => {
    await withRuntime([...A, ...B], async (runtime) => {
      const run = await runtime.run('groupDeployment', { strategy: { groups: GROUPS }, ...QUICK_POLL });
      await runsStarted(runtime, run.id, 4); // three prepares, the first deploy
      await killDeployment(runtime);
      expect((await runtime.deployments.getDeployment(run.id))!.state.groups['a']!.stage).toBe('PREPARED');

      const resumed = await runtime.run('groupDeployment', { resumeDeploymentId: run.id });
      expect((await resumed.outcome).output).toMatchObject({ status: 'SUCCEEDED' });
      const site = runtime.simulator.state();
      for (const node of [...namesOf(A), ...namesOf(B)])
        expect({ node, prepares: site.nodes[node]!.prepareCount, deploys: site.nodes[node]!.deployCount }).toEqual({ node, prepares: 1, deploys: 1 });
    });
  });

  it('applies a cancel requested while nothing ran it, and refuses to resume a deployment that has ended', async () => {
    await withRuntime([...A, ...B], async (runtime) => {
      const run = await runtime.run('groupDeployment', { strategy: { groups: GROUPS }, ...QUICK_POLL });
      await runsStarted(runtime, run.id, 1);
      await killDeployment(runtime);
      // The facade cannot tell from here that its process died; the request waits in the store.
      expect(await runtime.cancel(run.id)).toMatchObject({ state: 'CANCELLING' });

      const resumed = await runtime.run('groupDeployment', { resumeDeploymentId: run.id });
      expect((await resumed.outcome).output).toMatchObject({ status: 'CANCELLED' });
      expect(deploymentNodeRuns(runtime, run.id)).toHaveLength(1);

      const again = await runtime.run('groupDeployment', { resumeDeploymentId: run.id });
      const refused = await again.outcome;
      expect(refused.error).toBe('InvalidInputError');
      expect(causeMessage(refused)).toContain(`resumeDeploymentId: deployment ${run.id} has ended (CANCELLED)`);
    });
  });
});
