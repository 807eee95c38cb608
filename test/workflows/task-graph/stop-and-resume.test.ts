import { parseSiteDefinition } from '../../../simulator';
import { eventually, startTestRuntime } from '../../support/embedded';
import { maxConcurrentTasks, drainRebootResumeGraph } from '../../support/task-graph-runs';

/**
 * Issue 26, item 2: `rollout session stop` of a task run did not stop it. The run logged `Task run
 * STOPPED` on every pass with no wait between passes, and at its continue-as-new the stop request was
 * gone: it resumed itself, drained and rebooted the nodes it had not touched, and ended SUCCEEDED.
 * A stop is now the run's status (STOPPING, as a deployment's or an upgrade's), kept by every pass and
 * across continue-as-new; the workflow ends once nothing is in flight, and a person's resume finishes
 * exactly what was left. Checked against the site's own record (its task log and node counters).
 */
const NODES = Array.from({ length: 8 }, (_, i) => `c${i + 1}`);
const GRAPH = drainRebootResumeGraph('cos-2.4');
const POLL_SECONDS = 10;

describe('stopping a task run', () => {
  it('a drain/reboot/resume run over 8 nodes (--max-in-transition 2) stopped while a reboot runs: the reboots finish, nothing else starts, it ends STOPPED across continue-as-new; resume finishes exactly what was left', async () => {
    const site = parseSiteDefinition({
      nodes: NODES.map((name, i) => ({ name, nid: i + 1, roles: ['compute'] })),
      bootTemplates: ['cos-2.4'],
      timing: { bootSeconds: 120, returnSeconds: 10 },
    });
    // A short execution budget: the stop must survive several continue-as-new while the reboots finish.
    const runtime = await startTestRuntime({ site, taskGraphSettings: { iterationsPerExecution: 3 } });
    try {
      const run = await runtime.run('taskGraph', { graph: GRAPH, maxInTransition: 2, pollIntervalSeconds: POLL_SECONDS });
      const rebooting = await eventually(
        runtime,
        async () => {
          const running = runtime.simulator.state().taskLog.filter((e) => e.task === 'reboot_compute' && e.end === undefined);
          return running.length > 0 ? running.map((e) => e.node) : undefined;
        },
        'a reboot task running',
      );
      const { stop, startedBefore } = await runtime.clock.busy(async () => ({
        startedBefore: runtime.simulator.state().taskLog.map((e) => `${e.node}/${e.task}`),
        stop: await runtime.stop(run.id),
      }));
      expect(stop).toEqual({ id: run.id, kind: 'tasks', state: 'STOPPING', running: true });

      const outcome = await run.outcome;
      expect(outcome.status).toBe('SUCCEEDED');
      const stopped = (await runtime.taskRun(run.id))!;
      expect(stopped.status).toBe('STOPPED');
      expect(await runtime.isRunning('tasks', run.id)).toBe(false);
      const record = (await runtime.taskRuns.getRun(run.id))!;
      expect(record.status).toBe('STOPPED');

      // The site: what was in flight finished (no task still running), the nodes the run had not touched were left alone.
      const atStop = runtime.simulator.state();
      expect(atStop.taskLog.every((e) => e.end !== undefined)).toBe(true);
      const touched = [...new Set(atStop.taskLog.map((e) => e.node))].sort();
      expect(touched).toEqual(expect.arrayContaining(rebooting));
      expect(touched.length).toBeLessThanOrEqual(2);
      for (const node of NODES.filter((n) => !touched.includes(n)))
        expect({ node, ...pick(atStop.nodes[node]!) }).toEqual({ node, drainCount: 0, bootCount: 0, resumeCount: 0 });
      for (const node of rebooting) expect({ node, ...pick(atStop.nodes[node]!) }).toEqual({ node, drainCount: 1, bootCount: 1, resumeCount: 0 });
      // Nothing started after the stop: the site ran exactly the tasks that had started before it.
      expect(atStop.taskLog.map((e) => `${e.node}/${e.task}`)).toEqual(startedBefore);

      // No busy loop: the run said STOPPED once, and its passes stayed near one per poll interval while the reboots finished (it used to make 1,000 in no time).
      const messages = await runtime.taskRuns.messages.list(run.id);
      expect(messages.filter((m) => m === 'Task run STOPPED')).toHaveLength(1);
      const elapsed = Math.max(...atStop.taskLog.map((e) => e.end!));
      expect(record.increment).toBeLessThanOrEqual(2 * Math.ceil(elapsed / POLL_SECONDS));

      // A person's resume carries it on and finishes exactly what was left: every node drained, rebooted and resumed once.
      const resumed = await runtime.run('taskGraph', { resumeRunId: run.id }, `${run.id}-resume-1`);
      expect((await resumed.outcome).status).toBe('SUCCEEDED');
      const view = (await runtime.taskRun(run.id))!;
      expect(view.status).toBe('SUCCEEDED');
      const end = runtime.simulator.state();
      for (const node of NODES) {
        expect({ node, ...pick(end.nodes[node]!) }).toEqual({ node, drainCount: 1, bootCount: 1, resumeCount: 1 });
        // Back in service (IDLE, or IDLE* until slurmd's next registration after the resume).
        expect(end.nodes[node]!.wlmState).toMatch(/^IDLE\*?$/);
        expect(end.taskLog.filter((e) => e.node === node).map((e) => `${e.task} ${e.result}`)).toEqual([
          'drain_compute ok',
          'reboot_compute ok',
          'resume_compute ok',
        ]);
      }
      expect(maxConcurrentTasks(end.taskLog)).toBeLessThanOrEqual(2);
      expect(end.violations).toEqual([]);
      expect(await runtime.taskRuns.messages.list(run.id)).toContain('Resumed after a stop');
    } finally {
      await runtime.close();
    }
  });
});

function pick(node: { drainCount: number; bootCount: number; resumeCount: number }) {
  return { drainCount: node.drainCount, bootCount: node.bootCount, resumeCount: node.resumeCount };
}
