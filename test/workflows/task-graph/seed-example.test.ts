import { startTestRuntime } from '../../support/embedded';
import { EXAMPLE_GRAPH, exampleSite, maxConcurrentTasks, runTaskGraph, startsBySecond } from '../../support/task-graph-runs';

/**
 * Fuel's granular deployment spec, worked example, end to end: the TaskGraph workflow on the
 * embedded engine, its tasks run by the simulated site's head node (pdsh over its SSM endpoint) in
 * simulated time (30 s a task, a poll every 10 s, on virtual time).
 */
describe('the seed worked example on the embedded engine and the simulated site', () => {
  it('deploys node-1 first; node-4 and node-2 together; then node-3 and node-5; node-7 and node-6 after every controller; node-8 after node-7', async () => {
    const runtime = await startTestRuntime({ site: exampleSite() });
    try {
      const { outcome, view, site } = await runTaskGraph(runtime, { graph: EXAMPLE_GRAPH });
      expect(outcome.status).toBe('SUCCEEDED');
      expect(view.status).toBe('SUCCEEDED');
      for (const tasks of Object.values(view.nodes)) expect(tasks).toEqual({ setup_network: 'ACTIVE', setup_services: 'ACTIVE' });
      expect(Object.keys(view.nodes)).toHaveLength(8);

      // The order, exactly: each batch starts at the poll that sees the one before it end.
      expect(startsBySecond(site.taskLog)).toEqual([
        [0, ['node-1/setup_network']],
        [30, ['node-1/setup_services']],
        [60, ['node-2/setup_network', 'node-4/setup_network']],
        [90, ['node-2/setup_services', 'node-4/setup_services']],
        [120, ['node-3/setup_network', 'node-5/setup_network']],
        [150, ['node-3/setup_services', 'node-5/setup_services']],
        [180, ['node-6/setup_network', 'node-7/setup_network']],
        [210, ['node-6/setup_services', 'node-7/setup_services']],
        [240, ['node-8/setup_network']],
        [270, ['node-8/setup_services']],
      ]);

      // The same, as the spec words it: each rule checked on the log's times.
      const run = (node: string, task: string) => site.taskLog.find((e) => e.node === node && e.task === task)!;
      const first = (node: string) => run(node, 'setup_network').start;
      const last = (node: string) => run(node, 'setup_services').end!;
      for (const entry of site.taskLog) expect(entry.result).toBe('ok');
      for (const node of Object.keys(view.nodes)) expect(run(node, 'setup_network').end!).toBeLessThanOrEqual(run(node, 'setup_services').start);
      expect(Math.min(...['node-2', 'node-3', 'node-4', 'node-5', 'node-6', 'node-7', 'node-8'].map(first))).toBeGreaterThanOrEqual(last('node-1'));
      expect(first('node-4')).toBe(first('node-2'));
      expect(Math.min(first('node-3'), first('node-5'))).toBeGreaterThanOrEqual(Math.max(last('node-2'), last('node-4')));
      const controllers = Math.max(...['node-1', 'node-2', 'node-3', 'node-4', 'node-5'].map(last));
      expect(first('node-6')).toBeGreaterThanOrEqual(controllers);
      expect(first('node-7')).toBe(first('node-6'));
      expect(first('node-8')).toBeGreaterThanOrEqual(last('node-7'));
      expect(site.violations).toEqual([]);
      expect(view.elapsedSeconds).toBe(300);

      // One pdsh command per batch of alike tasks, the nodes as a quoted hostlist.
      const commands = runtime.simulator.simulator.headNode.commandLog.filter((line) => line.startsWith('pdsh'));
      expect(commands).toHaveLength(10);
      expect(commands[2]).toMatch(/^pdsh -S -w 'node-\[2,4\]' 'ROLLOUT_TASK=/);
    } finally {
      await runtime.close();
    }
  });

  it('keeps to the global cap: with maxInTransition 1 no two tasks run at once, in the same order', async () => {
    const runtime = await startTestRuntime({ site: exampleSite() });
    try {
      const { view, site } = await runTaskGraph(runtime, { graph: EXAMPLE_GRAPH, maxInTransition: 1 });
      expect(view.status).toBe('SUCCEEDED');
      expect(maxConcurrentTasks(site.taskLog)).toBe(1);
      expect(site.taskLog.map((e) => e.node).filter((n, i, all) => all.indexOf(n) === i)).toEqual([
        'node-1',
        'node-4',
        'node-2',
        'node-3',
        'node-5',
        'node-6',
        'node-7',
        'node-8',
      ]);
    } finally {
      await runtime.close();
    }
  });

  it('carries on across executions (continue-as-new) with the same log, each execution far inside the quotas', async () => {
    const runtime = await startTestRuntime({ site: exampleSite(), taskGraphSettings: { iterationsPerExecution: 5 } });
    try {
      const { outcome, view, site } = await runTaskGraph(runtime, { graph: EXAMPLE_GRAPH });
      expect(outcome.status).toBe('SUCCEEDED');
      expect(view.status).toBe('SUCCEEDED');
      expect(startsBySecond(site.taskLog).map(([second]) => second)).toEqual([0, 30, 60, 90, 120, 150, 180, 210, 240, 270]);
      const executions = runtime.engine.executions.filter((e) => e.executionArn.includes(':TaskGraph:'));
      expect(executions.length).toBeGreaterThan(5);
      for (const e of executions) {
        // Open and Control Only, then at most 5 increments of Check Run + Wait + Advance, then Check Run and the end.
        expect(e.historyEvents).toBeLessThanOrEqual(2 + 5 + 2 + 5 * (2 + 2 + 5) + 2 + 5 + 2);
        expect(e.largestPayloadBytes).toBeLessThan(2000);
      }
    } finally {
      await runtime.close();
    }
  });
});
