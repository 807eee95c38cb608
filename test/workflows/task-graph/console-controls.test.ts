import { causeMessage } from '../../../control-plane/execution-cause';
import { groupTaskRunId } from '../../../core/task-graph';
import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { parseSiteDefinition } from '../../../simulator';
import { eventually, startTestRuntime } from '../../support/embedded';
import { groupOf } from '../../support/deployment-sites';
import { EXAMPLE_GRAPH, exampleSite, drainRebootResumeGraph } from '../../support/task-graph-runs';

/**
 * The console's controls of a task run, as an upgrade's and a deployment's: an execution of the
 * task-graph machine started with `{"stopRunId": ID}` or `{"cancelRunId": ID}` writes the request
 * (as `rollout session stop|cancel` does) and ends; the running run winds down at its next pass.
 * Checked against the site's own record (its task log and node counters).
 */
const NODES = Array.from({ length: 6 }, (_, i) => `c${i + 1}`);
const GRAPH = drainRebootResumeGraph('cos-2.4');
const site = () =>
  parseSiteDefinition({
    nodes: NODES.map((name, i) => ({ name, nid: i + 1, roles: ['compute'] })),
    bootTemplates: ['cos-2.4'],
    timing: { bootSeconds: 120, returnSeconds: 10 },
  });
const counters = (node: { drainCount: number; bootCount: number; resumeCount: number }) => ({
  drains: node.drainCount,
  boots: node.bootCount,
  resumes: node.resumeCount,
});

/** Starts the run and waits until a reboot runs; returns the run and the nodes whose tasks had started by then. */
async function runUntilRebooting(runtime: EmbeddedRuntime) {
  const run = await runtime.run('taskGraph', { graph: GRAPH, maxInTransition: 2, pollIntervalSeconds: 10 });
  await eventually(
    runtime,
    async () => (runtime.simulator.state().taskLog.some((e) => e.task === 'reboot_compute' && e.end === undefined) ? true : undefined),
    'a reboot task running',
  );
  return run;
}

describe('a task run controlled from the console ({"stopRunId"}, {"cancelRunId"} on the task-graph machine)', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('{"stopRunId"} stops it: what was in flight finishes, no node it had not touched is touched, it ends STOPPED; resume finishes the rest', async () => {
    const rt = (runtime = await startTestRuntime({ site: site() }));
    const run = await runUntilRebooting(rt);
    const { control, startedBefore } = await rt.clock.busy(async () => ({
      startedBefore: rt.simulator.state().taskLog.map((e) => `${e.node}/${e.task}`),
      control: await rt.run('taskGraph', { stopRunId: run.id }),
    }));
    expect(await control.outcome).toMatchObject({ status: 'SUCCEEDED', output: { stopRequested: { id: run.id, kind: 'tasks', state: 'STOPPING' } } });
    expect((await run.outcome).status).toBe('SUCCEEDED');
    expect((await rt.taskRuns.getRun(run.id))!.status).toBe('STOPPED');
    const atStop = rt.simulator.state();
    expect(atStop.taskLog.map((e) => `${e.node}/${e.task}`)).toEqual(startedBefore);
    const touched = new Set(atStop.taskLog.map((e) => e.node));
    for (const node of NODES.filter((n) => !touched.has(n)))
      expect({ node, ...counters(atStop.nodes[node]!) }).toEqual({ node, drains: 0, boots: 0, resumes: 0 });
    // The control execution made no run of its own.
    expect((await rt.sessions()).filter((s) => s.kind === 'tasks').map((s) => s.id)).toEqual([run.id]);

    const resumed = await rt.run('taskGraph', { resumeRunId: run.id }, `${run.id}-resume-1`);
    expect((await resumed.outcome).status).toBe('SUCCEEDED');
    const end = rt.simulator.state();
    for (const node of NODES) expect({ node, ...counters(end.nodes[node]!) }).toEqual({ node, drains: 1, boots: 1, resumes: 1 });
    expect(end.violations).toEqual([]);
  });

  it('{"cancelRunId"} cancels it: what was in flight finishes, nothing starts after it, its drains are lifted, it ends CANCELLED', async () => {
    const rt = (runtime = await startTestRuntime({ site: site() }));
    const run = await runUntilRebooting(rt);
    const { control, startedBefore } = await rt.clock.busy(async () => ({
      startedBefore: rt.simulator.state().taskLog.map((e) => `${e.node}/${e.task}`),
      control: await rt.run('taskGraph', { cancelRunId: run.id }),
    }));
    expect(await control.outcome).toMatchObject({ status: 'SUCCEEDED', output: { cancelRequested: { id: run.id, kind: 'tasks', state: 'CANCELLING' } } });
    await run.outcome;
    expect((await rt.taskRuns.getRun(run.id))!.status).toBe('CANCELLED');
    const end = rt.simulator.state();
    // Nothing started after the cancel on the site; each node the run drained is back in service, none left drained by it.
    expect(end.taskLog.filter((e) => e.task !== 'resume_compute').map((e) => `${e.node}/${e.task}`)).toEqual(
      startedBefore.filter((t) => !t.endsWith('/resume_compute')),
    );
    for (const node of NODES) {
      const state = end.nodes[node]!;
      expect({ node, boots: state.bootCount, drained: state.drainCount > 0 ? state.wlmState : 'untouched' }).toEqual({
        node,
        boots: startedBefore.includes(`${node}/reboot_compute`) ? 1 : 0,
        drained: startedBefore.includes(`${node}/drain_compute`) ? expect.stringMatching(/^IDLE\*?$/) : 'untouched',
      });
    }
    expect(end.violations).toEqual([]);
  });

  it("refuses an unknown id, a run that has ended, a malformed input, and a group's deploy phase (naming its deployment), creating no run", async () => {
    const rt = (runtime = await startTestRuntime({ site: exampleSite() }));
    const strategy = { groups: [groupOf('control-plane', ['node-1', 'node-4', 'node-2', 'node-3', 'node-5'], { critical: true })] };
    const deployment = await rt.run('groupDeployment', { strategy, taskGraph: { graph: EXAMPLE_GRAPH }, pollIntervalSeconds: 10 });
    const childId = groupTaskRunId(deployment.id, 'control-plane');
    await eventually(
      rt,
      async () => ((await rt.taskRun(childId))?.nodes['node-1']?.setup_network === 'TRANSITION' ? true : undefined),
      'the deploy phase under way',
    );
    const control = async (input: unknown) => rt.clock.busy(async () => (await rt.run('taskGraph', input)).outcome);

    const cancelChild = await control({ cancelRunId: childId });
    expect(cancelChild).toMatchObject({ status: 'FAILED', error: 'SessionNotCancellableError' });
    expect(causeMessage(cancelChild)).toContain(`session ${childId} is the deploy phase of deployment ${deployment.id} (cancel the deployment)`);
    const stopChild = await control({ stopRunId: childId });
    expect(stopChild).toMatchObject({ status: 'FAILED', error: 'SessionNotStoppableError' });
    expect(causeMessage(stopChild)).toContain(`(stop the deployment)`);
    expect(await control({ cancelRunId: 'no-such-run' })).toMatchObject({ status: 'FAILED', error: 'TaskRunNotFoundError' });
    const malformed = await control({ stopRunId: '', graph: EXAMPLE_GRAPH });
    expect(malformed).toMatchObject({ status: 'FAILED', error: 'InvalidInputError' });
    expect(causeMessage(malformed)).toMatch(/stopRunId: must not be empty.*graph: unknown key/);

    // The deployment ran on: its deploy phase was neither cancelled nor stopped, every node deployed once.
    expect((await deployment.outcome).output).toMatchObject({ status: 'SUCCEEDED' });
    expect((await rt.taskRun(childId))!.status).toBe('SUCCEEDED');
    const log = rt.simulator.state().taskLog;
    expect(log).toHaveLength(10);
    expect(new Set(log.map((e) => `${e.node}/${e.task}`)).size).toBe(10);
    const ended = await control({ cancelRunId: childId });
    expect(ended).toMatchObject({ status: 'FAILED', error: 'SessionNotCancellableError' });
    expect((await rt.sessions()).filter((s) => s.kind === 'tasks')).toEqual([]);
  });
});
