import type { WorkflowName } from '../../contracts';
import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { parseSiteDefinition } from '../../simulator';
import { deploymentNodeRuns, deploymentSite, groupOf, namedNodes, namesOf, QUICK_POLL } from '../support/deployment-sites';
import { eventually, startTestRuntime } from '../support/embedded';
import { buildSite, nodeName, upgradeRequest } from '../support/sites';
import { drainRebootResumeGraph } from '../support/task-graph-runs';

/**
 * Stopping a run whose process died: the stop request (STOPPING) has nothing to wind it down, and a
 * person's `session resume` used to only finish the stop (it ended STOPPED): a second resume was needed.
 * A person who runs `session resume` asks the run to carry on: one resume withdraws the stop (or reopens
 * a STOPPED run) and the run carries on to its end, the same rule for upgrades, deployments and task
 * runs (core/session-control.ts). Checked against the site's own record.
 */

/** Aborts every execution of `workflow` still running, as the process dying would (no cleanup). */
async function killProcess(runtime: EmbeddedRuntime, workflow: 'RollingUpgrade' | 'GroupDeployment' | 'TaskGraph') {
  const arn = runtime.stateMachineArns[workflow];
  await runtime.clock.busy(async () => {
    for (const e of runtime.engine.listExecutions(arn).filter((x) => x.status === 'RUNNING'))
      await runtime.engine.stop(e.executionArn, 'States.Aborted', 'the process died');
  });
}

/** The person's stop of a run nothing runs any more, then one resume: its outcome. */
async function stopThenResumeOnce(runtime: EmbeddedRuntime, workflow: WorkflowName, input: Record<string, string>, id: string) {
  const stop = await runtime.clock.busy(() => runtime.stop(id));
  expect(stop).toMatchObject({ id, state: 'STOPPING' });
  const resumed = await runtime.run(workflow, input, `${id}-resume-1`);
  return resumed.outcome;
}

const GRAPH = drainRebootResumeGraph('cos-2.4');

describe('a stop asked of a run whose process died, then one `session resume`: the run carries on to its end', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('a lock-step upgrade: READY, every node upgraded and rebooted once, nothing left running', async () => {
    const rt = (runtime = await startTestRuntime({ site: buildSite(6) }));
    const run = await rt.run('rollingUpgrade', upgradeRequest({ upgradeStepSize: 2 }));
    await eventually(rt, async () => (((await rt.store.getSession(run.id))?.progress.counts?.upgraded ?? 0) >= 2 ? true : undefined), '2 nodes upgraded');
    await killProcess(rt, 'RollingUpgrade');

    expect(await stopThenResumeOnce(rt, 'rollingUpgrade', { resumeUpgradeId: run.id }, run.id)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await rt.store.getSession(run.id)).toMatchObject({ state: 'READY', completed: true, progress: { counts: { upgraded: 6, failed: 0 } } });
    const site = rt.simulator.state();
    for (let i = 0; i < 6; i++) expect({ node: nodeName(i), boots: site.nodes[nodeName(i)]!.bootCount }).toEqual({ node: nodeName(i), boots: 1 });
    expect(site.violations).toEqual([]);
    expect(await rt.isRunning('upgrade', run.id)).toBe(false);
    expect(await rt.store.messages.list(run.id)).toContainEqual(expect.stringMatching(/^Stop withdrawn by a resume: carrying on at step \d+ of \d+$/));
  });

  it('a window upgrade: READY, every node upgraded and rebooted once', async () => {
    const rt = (runtime = await startTestRuntime({ site: buildSite(6) }));
    const run = await rt.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 1 }));
    await eventually(rt, async () => (((await rt.store.getSession(run.id))?.progress.counts?.upgraded ?? 0) >= 2 ? true : undefined), '2 nodes upgraded');
    await killProcess(rt, 'RollingUpgrade');

    expect(await stopThenResumeOnce(rt, 'rollingUpgrade', { resumeUpgradeId: run.id }, run.id)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await rt.store.getSession(run.id)).toMatchObject({ state: 'READY', completed: true, progress: { counts: { upgraded: 6, failed: 0 } } });
    const site = rt.simulator.state();
    for (let i = 0; i < 6; i++) expect({ node: nodeName(i), boots: site.nodes[nodeName(i)]!.bootCount }).toEqual({ node: nodeName(i), boots: 1 });
    expect(site.violations).toEqual([]);
  });

  it('a group deployment: SUCCEEDED, every node prepared and deployed once', async () => {
    const nodes = namedNodes('n', 4);
    const rt = (runtime = await startTestRuntime({ site: deploymentSite(nodes) }));
    const groups = [groupOf('ga', namesOf(nodes), { critical: true, strategy: { type: 'one_by_one' }, success_criteria: { percent_successful_nodes: 100 } })];
    const run = await rt.run('groupDeployment', { strategy: { groups }, ...QUICK_POLL });
    await eventually(
      rt,
      async () => (deploymentNodeRuns(rt, run.id).filter((r) => r.finishedAt !== undefined).length >= 2 ? true : undefined),
      '2 prepares done',
    );
    await killProcess(rt, 'GroupDeployment');

    expect(await stopThenResumeOnce(rt, 'groupDeployment', { resumeDeploymentId: run.id }, run.id)).toMatchObject({
      status: 'SUCCEEDED',
      output: { status: 'SUCCEEDED', criticalGroupsFailed: false },
    });
    const site = rt.simulator.state();
    for (const node of namesOf(nodes))
      expect({ node, prepares: site.nodes[node]!.prepareCount, deploys: site.nodes[node]!.deployCount }).toEqual({ node, prepares: 1, deploys: 1 });
    expect(site.violations).toEqual([]);
    // It says so, as an upgrade and a task run do (core/session-control.ts resumedMessage).
    expect(await rt.deployments.messages.list(run.id)).toContain('Stop withdrawn by a resume: carrying on');
  });

  it('a task run: SUCCEEDED, every node drained, rebooted and resumed once', async () => {
    const NODES = Array.from({ length: 6 }, (_, i) => `c${i + 1}`);
    const site = parseSiteDefinition({
      nodes: NODES.map((name, i) => ({ name, nid: i + 1, roles: ['compute'] })),
      bootTemplates: ['cos-2.4'],
      timing: { bootSeconds: 120, returnSeconds: 10 },
    });
    const rt = (runtime = await startTestRuntime({ site }));
    const run = await rt.run('taskGraph', { graph: GRAPH, maxInTransition: 2, pollIntervalSeconds: 10 });
    await eventually(
      rt,
      async () => (rt.simulator.state().taskLog.some((e) => e.task === 'resume_compute' && e.end !== undefined) ? true : undefined),
      'a node done',
    );
    await killProcess(rt, 'TaskGraph');

    expect(await stopThenResumeOnce(rt, 'taskGraph', { resumeRunId: run.id }, run.id)).toMatchObject({ status: 'SUCCEEDED' });
    expect((await rt.taskRuns.getRun(run.id))!.status).toBe('SUCCEEDED');
    expect(await rt.taskRuns.messages.list(run.id)).toContain('Stop withdrawn by a resume: carrying on');
    const end = rt.simulator.state();
    for (const node of NODES)
      expect({ node, drains: end.nodes[node]!.drainCount, boots: end.nodes[node]!.bootCount, resumes: end.nodes[node]!.resumeCount }).toEqual({
        node,
        drains: 1,
        boots: 1,
        resumes: 1,
      });
    expect(end.violations).toEqual([]);
  });
});
