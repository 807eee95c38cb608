import { groupTaskRunId } from '../../../core/task-graph';
import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { call, startServedApi } from '../../support/api';
import { eventually, startTestRuntime } from '../../support/embedded';
import { groupOf, runDeployment } from '../../support/deployment-sites';
import { EXAMPLE_GRAPH, exampleSite, startsBySecond } from '../../support/task-graph-runs';

const CONTROL = ['node-1', 'node-4', 'node-2', 'node-3', 'node-5'];
const WORKERS = ['node-6', 'node-7', 'node-8'];
const strategy = {
  groups: [
    groupOf('control-plane', CONTROL, { critical: true, success_criteria: { percent_successful_nodes: 100 } }),
    groupOf('workers', WORKERS, { critical: true, depends_on: ['control-plane'], success_criteria: { minimum_successful_nodes: 2 } }),
  ],
};
const request = { strategy, taskGraph: { graph: EXAMPLE_GRAPH }, pollIntervalSeconds: 10 };

/** Each group's task run as the deployment left it. */
async function taskRunsOf(runtime: EmbeddedRuntime, deploymentId: string) {
  return Object.fromEntries(
    await Promise.all(['control-plane', 'workers'].map(async (group) => [group, await runtime.taskRun(groupTaskRunId(deploymentId, group))] as const)),
  );
}

/** A runtime on `options`, closed after `body` whatever it threw. */
async function withRuntime(options: Parameters<typeof startTestRuntime>[0], body: (runtime: EmbeddedRuntime) => Promise<void>): Promise<void> {
  const runtime = await startTestRuntime(options);
  try {
    await body(runtime);
  } finally {
    await runtime.close();
  }
}

/** Starts the deployment and waits until node-1's first task is in flight: the control plane's deploy phase is under way. */
async function startWithFirstTaskInFlight(runtime: EmbeddedRuntime) {
  const run = await runtime.run('groupDeployment', request);
  const runId = groupTaskRunId(run.id, 'control-plane');
  await eventually(
    runtime,
    async () => ((await runtime.taskRun(runId))?.nodes['node-1']?.setup_network === 'TRANSITION' ? true : undefined),
    'the first task in flight',
  );
  return { run, runId };
}

describe("a task graph as each Shipyard group's deploy phase", () => {
  it("prepares each group through the provisioner, deploys it by the graph over its own nodes, in the strategy's order", async () => {
    await withRuntime({ site: exampleSite() }, async (runtime) => {
      const finished = await runDeployment(runtime, request);
      expect(finished.outcome.status).toBe('SUCCEEDED');
      expect(finished.report?.groups['control-plane']?.stage).toBe('DEPLOYED');
      expect(finished.report?.groups.workers?.stage).toBe('DEPLOYED');
      for (const node of [...CONTROL, ...WORKERS]) expect(finished.report?.nodes[node]).toBe('DEPLOYED');
      // The provisioner prepared every node and deployed none: the graph was the deploy phase.
      for (const node of [...CONTROL, ...WORKERS]) expect(finished.site.nodes[node]).toMatchObject({ prepareCount: 1, deployCount: 0 });
      const runs = await taskRunsOf(runtime, finished.deploymentId);
      expect(runs['control-plane']?.deployment).toEqual({ deploymentId: finished.deploymentId, group: 'control-plane' });
      expect(Object.keys(runs['control-plane']!.nodes).sort()).toEqual([...CONTROL].sort());
      expect(Object.keys(runs.workers!.nodes).sort()).toEqual([...WORKERS].sort());
      // Inside each group the graph orders the nodes as before; the workers start once the control plane deployed.
      const log = finished.site.taskLog;
      const lastControl = Math.max(...log.filter((e) => CONTROL.includes(e.node)).map((e) => e.end!));
      expect(Math.min(...log.filter((e) => WORKERS.includes(e.node)).map((e) => e.start))).toBeGreaterThan(lastControl);
      const controlStarts = startsBySecond(log.filter((e) => CONTROL.includes(e.node))).map(([, runs]) => runs);
      expect(controlStarts).toEqual([
        ['node-1/setup_network'],
        ['node-1/setup_services'],
        ['node-2/setup_network', 'node-4/setup_network'],
        ['node-2/setup_services', 'node-4/setup_services'],
        ['node-3/setup_network', 'node-5/setup_network'],
        ['node-3/setup_services', 'node-5/setup_services'],
      ]);
      const workerStarts = startsBySecond(log.filter((e) => WORKERS.includes(e.node))).map(([, runs]) => runs);
      expect(workerStarts).toEqual([
        ['node-6/setup_network', 'node-7/setup_network'],
        ['node-6/setup_services', 'node-7/setup_services'],
        ['node-8/setup_network'],
        ['node-8/setup_services'],
      ]);
    });
  });

  it("judges a group's success criteria by the nodes whose tasks all ended ACTIVE", async () => {
    await withRuntime({ site: exampleSite({ 'node-7': { faults: { tasks: { setup_services: 'hang' } } } }) }, async (runtime) => {
      const finished = await runDeployment(runtime, request);
      expect(finished.outcome).toMatchObject({ status: 'FAILED', error: 'CriticalGroupFailed' });
      // node-6 deployed; node-7 timed out and node-8 waited behind it: 1 of the 2 successes the group needs.
      expect(finished.report?.groups.workers).toMatchObject({ stage: 'FAILED', failures: [{ criteria: 'minimum_successful_nodes', needed: 2, actual: 1 }] });
      expect(finished.report?.nodes).toMatchObject({ 'node-6': 'DEPLOYED', 'node-7': 'FAILED', 'node-8': 'FAILED' });
      expect(finished.report?.groups['control-plane']?.stage).toBe('DEPLOYED');
      const runs = await taskRunsOf(runtime, finished.deploymentId);
      expect(runs.workers?.errors).toEqual({ 'node-7': { setup_services: 'timeout: stopped on the node after 360 s' } });
      expect(runs.workers?.blocked['node-8']).toEqual({ setup_network: ['node-7/setup_services'], setup_services: ['node-7/setup_services'] });
    });
  });

  it("a cancel during a group's task-graph deploy phase stops its run: no task starts after it, those in flight finish, the group keeps its stage and the deployment ends CANCELLED", async () => {
    await withRuntime({ site: exampleSite() }, async (runtime) => {
      // node-1's first task started (the control plane's deploy phase is under way): cancel then.
      const { run, runId } = await startWithFirstTaskInFlight(runtime);
      const cancelledAt = runtime.clock.now();
      await runtime.clock.busy(() => runtime.cancel(run.id));
      const outcome = await run.outcome;
      expect(outcome.output).toMatchObject({ status: 'CANCELLED' });
      const view = (await runtime.taskRun(runId))!;
      expect(view.status).toBe('CANCELLED');
      // The task in flight ran to its end; nothing else started, on any node.
      const log = runtime.simulator.state().taskLog;
      expect(log.map((e) => `${e.node}/${e.task}`)).toEqual(['node-1/setup_network']);
      expect(log.every((e) => e.start <= (cancelledAt - runtime.clock.startAt) / 1000 && e.result === 'ok')).toBe(true);
      expect(view.leftAlone['node-1']).toEqual({ setup_services: 'halted: cancelled' });
      const deployment = await runtime.session(run.id);
      expect(deployment?.kind === 'deployment' && deployment.report).toMatchObject({
        status: 'CANCELLED',
        groups: { 'control-plane': { stage: 'PREPARED' }, workers: { stage: 'NOT_STARTED' } },
      });
      expect(await runtime.store.locks.getLockOwners([...CONTROL, ...WORKERS])).toEqual(new Map());
    });
  });

  it("a cancel of a group's task-graph deploy phase alone is refused, naming its deployment: the deployment runs on, every node DEPLOYED, every task ran once on the site", async () => {
    await withRuntime({ site: exampleSite() }, async (runtime) => {
      const { run, runId } = await startWithFirstTaskInFlight(runtime);
      // Cancelled alone, the run ended CANCELLED and Evaluate Phase recorded its unsettled nodes FAILED while the deployment ran on.
      await expect(runtime.clock.busy(() => runtime.cancel(runId))).rejects.toMatchObject({
        name: 'SessionNotCancellableError',
        message: `session ${runId} is the deploy phase of deployment ${run.id} (cancel the deployment) and cannot be cancelled`,
      });
      expect((await runtime.taskRun(runId))!.status).toBe('RUNNING');
      expect((await run.outcome).output).toMatchObject({ status: 'SUCCEEDED', criticalGroupsFailed: false });
      const done = await runtime.session(run.id);
      expect(done?.kind === 'deployment' && done.report.nodes).toEqual(Object.fromEntries([...CONTROL, ...WORKERS].map((node) => [node, 'DEPLOYED'])));
      const log = runtime.simulator.state().taskLog;
      expect(log.map((e) => `${e.node}/${e.task} ${e.result}`).sort()).toEqual(
        [...CONTROL, ...WORKERS].flatMap((node) => [`${node}/setup_network ok`, `${node}/setup_services ok`]).sort(),
      );
      expect(runtime.simulator.state().violations).toEqual([]);
    });
  });

  it("the REST API reaches no group's deploy phase on its own: DELETE and POST stop of its id answer 404, and the run goes on", async () => {
    const served = await startServedApi(exampleSite());
    const { runtime } = served;
    try {
      const { run, runId } = await startWithFirstTaskInFlight(runtime);
      expect((await call(runtime, served.apiEndpoint, 'DELETE', `/sessions/${runId}`)).status).toBe(404);
      expect((await call(runtime, served.apiEndpoint, 'POST', `/sessions/${runId}/stop`)).status).toBe(404);
      expect((await call(runtime, served.apiEndpoint, 'DELETE', `/deployments/${runId}`)).status).toBe(404);
      expect((await runtime.taskRun(runId))!.status).toBe('RUNNING');
      expect((await run.outcome).output).toMatchObject({ status: 'SUCCEEDED', criticalGroupsFailed: false });
      expect(runtime.simulator.state().taskLog).toHaveLength(16);
    } finally {
      await served.close();
    }
  });

  it("a stop during a group's task-graph deploy phase stops its run too (tasks in flight finish, none starts); the deployment's resume carries the run on and judges the phase once it finished: every task ran once", async () => {
    await withRuntime({ site: exampleSite() }, async (runtime) => {
      const { run, runId } = await startWithFirstTaskInFlight(runtime);
      // The run itself is not stopped apart from its deployment (its group would be judged on work it never did).
      await expect(runtime.clock.busy(() => runtime.stop(runId))).rejects.toMatchObject({
        name: 'SessionNotStoppableError',
        message: `session ${runId} is the deploy phase of deployment ${run.id} (stop the deployment) and cannot be stopped`,
      });
      expect(await runtime.clock.busy(() => runtime.stop(run.id))).toMatchObject({ kind: 'deployment', state: 'STOPPING' });
      expect((await run.outcome).output).toMatchObject({ status: 'STOPPED' });
      expect((await runtime.taskRun(runId))!.status).toBe('STOPPED');
      // The task in flight ran to its end; nothing else started, on any node; the group was not judged.
      expect(runtime.simulator.state().taskLog.map((e) => `${e.node}/${e.task} ${e.result}`)).toEqual(['node-1/setup_network ok']);
      const stopped = await runtime.session(run.id);
      expect(stopped?.kind === 'deployment' && stopped.report).toMatchObject({
        status: 'STOPPED',
        groups: { 'control-plane': { stage: 'PREPARED', failures: [] }, workers: { stage: 'NOT_STARTED' } },
      });

      const resumed = await runtime.run('groupDeployment', { resumeDeploymentId: run.id }, `${run.id}-resume-1`);
      expect((await resumed.outcome).output).toMatchObject({ status: 'SUCCEEDED', criticalGroupsFailed: false });
      const done = await runtime.session(run.id);
      expect(done?.kind === 'deployment' && done.report.nodes).toEqual(Object.fromEntries([...CONTROL, ...WORKERS].map((node) => [node, 'DEPLOYED'])));
      // The site: every node's two tasks ran once (node-1's first one before the stop, not again).
      const log = runtime.simulator.state().taskLog;
      expect(log.map((e) => `${e.node}/${e.task} ${e.result}`).sort()).toEqual(
        [...CONTROL, ...WORKERS].flatMap((node) => [`${node}/setup_network ok`, `${node}/setup_services ok`]).sort(),
      );
      expect(runtime.simulator.state().violations).toEqual([]);
    });
  });

  it('hands back to DeployGroup at the iteration budget and is started again until the run ends, with the same outcome', async () => {
    await withRuntime({ site: exampleSite(), taskGraphSettings: { iterationsPerExecution: 4 } }, async (runtime) => {
      const finished = await runDeployment(runtime, request);
      expect(finished.outcome.status).toBe('SUCCEEDED');
      for (const node of [...CONTROL, ...WORKERS]) expect(finished.report?.nodes[node]).toBe('DEPLOYED');
      const taskGraphExecutions = runtime.engine.listExecutions(runtime.stateMachineArns.TaskGraph);
      // 18 polls for the control plane and 12 for the workers: several executions each, none continued as new.
      expect(taskGraphExecutions.length).toBeGreaterThan(6);
      expect(taskGraphExecutions.every((e) => e.status === 'SUCCEEDED')).toBe(true);
      expect(taskGraphExecutions.every((e) => (e.output as { continuedAs?: unknown }).continuedAs === undefined)).toBe(true);
      expect(finished.site.taskLog).toHaveLength(16);
    });
  });

  it('refuses, before anything runs, a graph whose selection names nodes (the strategy selects them) or a task that does not exist', async () => {
    await withRuntime({ site: exampleSite() }, async (runtime) => {
      const withNodes = await runDeployment(runtime, { ...request, taskGraph: { graph: EXAMPLE_GRAPH, selection: { nodes: ['node-1'] } } });
      expect(withNodes.outcome).toMatchObject({ status: 'FAILED', error: 'InvalidInputError' });
      expect(withNodes.message).toContain("taskGraph.selection.nodes: a group deployment's nodes come from its strategy's selectors");
      const badTask = await runDeployment(runtime, { ...request, taskGraph: { graph: EXAMPLE_GRAPH, selection: { skip: ['no_such_task'] } } });
      expect(badTask.message).toContain("taskGraph.selection.skip: unknown task 'no_such_task'");
      expect(runtime.simulator.state().taskLog).toEqual([]);
    });
  });
});
