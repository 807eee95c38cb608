import { parseSiteMark } from '../../../core/site/node-claims';
import { parseSiteDefinition } from '../../../simulator';
import { startTestRuntime } from '../../support/embedded';
import { EXAMPLE_GRAPH, exampleSite, runTaskGraph, drainRebootResumeGraph } from '../../support/task-graph-runs';

const CONTROLLERS_AFTER_NODE_2 = ['node-3', 'node-5'];
const AFTER_CONTROLLERS = ['node-6', 'node-7', 'node-8'];

describe('task faults on the simulated site', () => {
  it("a failed task blocks its node's later tasks and every dependant on other nodes, each saying behind what", async () => {
    const runtime = await startTestRuntime({ site: exampleSite({ 'node-2': { faults: { tasks: { setup_network: 'fail' } } } }) });
    try {
      const { outcome, view, site } = await runTaskGraph(runtime, { graph: EXAMPLE_GRAPH });
      expect(outcome).toMatchObject({ status: 'FAILED', error: 'TaskRunFailed' });
      expect(view.status).toBe('FAILED');
      expect(view.nodes['node-2']).toEqual({ setup_network: 'ERROR', setup_services: 'BLOCKED' });
      expect(view.errors).toEqual({ 'node-2': { setup_network: 'failed: exit 1' } });
      // node-4 went with node-2 and finished; everything after the controllers waits behind node-2's failure.
      expect(view.nodes['node-4']).toEqual({ setup_network: 'ACTIVE', setup_services: 'ACTIVE' });
      expect(view.blocked['node-2']).toEqual({ setup_services: ['node-2/setup_network'] });
      for (const node of [...CONTROLLERS_AFTER_NODE_2, ...AFTER_CONTROLLERS]) {
        expect(view.nodes[node]).toEqual({ setup_network: 'BLOCKED', setup_services: 'BLOCKED' });
        expect(view.blocked[node]).toEqual({ setup_network: ['node-2/setup_network'], setup_services: ['node-2/setup_network'] });
      }
      expect(view.results['node-2']).toEqual({ setup_network: 'failed' });
      expect(site.taskLog.filter((e) => e.node === 'node-2')).toEqual([{ node: 'node-2', task: 'setup_network', start: 60, end: 90, result: 'failed' }]);
      expect(site.taskLog.some((e) => [...CONTROLLERS_AFTER_NODE_2, ...AFTER_CONTROLLERS].includes(e.node))).toBe(false);
    } finally {
      await runtime.close();
    }
  });

  it('a hung task ends as timeout at its timeout (360 s for setup_services), and its dependants are blocked behind it', async () => {
    const runtime = await startTestRuntime({ site: exampleSite({ 'node-7': { faults: { tasks: { setup_services: 'hang' } } } }) });
    try {
      const { view, site } = await runTaskGraph(runtime, { graph: EXAMPLE_GRAPH });
      expect(view.status).toBe('FAILED');
      expect(view.nodes['node-7']).toEqual({ setup_network: 'ACTIVE', setup_services: 'ERROR' });
      expect(view.errors['node-7']).toEqual({ setup_services: 'timeout: stopped on the node after 360 s' });
      expect(view.results['node-7']).toEqual({ setup_network: 'ok', setup_services: 'timeout' });
      expect(view.blocked).toEqual({ 'node-8': { setup_network: ['node-7/setup_services'], setup_services: ['node-7/setup_services'] } });
      // node-6 (cinder) does not wait for the network group: it finishes.
      expect(view.nodes['node-6']).toEqual({ setup_network: 'ACTIVE', setup_services: 'ACTIVE' });
      const hung = site.taskLog.find((e) => e.node === 'node-7' && e.task === 'setup_services')!;
      expect(hung).toEqual({ node: 'node-7', task: 'setup_services', start: 210, end: 570, result: 'timeout' });
      expect(site.taskLog.some((e) => e.node === 'node-8')).toBe(false);
    } finally {
      await runtime.close();
    }
  });

  it('a node that is not available is left alone, with its dependants, and the report says why', async () => {
    const runtime = await startTestRuntime({ site: exampleSite({ 'node-7': { available: false } }) });
    try {
      const { view, site } = await runTaskGraph(runtime, { graph: EXAMPLE_GRAPH });
      expect(view.status).toBe('FAILED');
      expect(view.leftAlone['node-7']).toEqual({ setup_network: 'node-unavailable', setup_services: 'waiting for ops left alone' });
      expect(view.leftAlone['node-8']).toEqual({ setup_network: 'waiting for ops left alone', setup_services: 'waiting for ops left alone' });
      expect(view.nodes['node-6']).toEqual({ setup_network: 'ACTIVE', setup_services: 'ACTIVE' });
      expect(site.taskLog.some((e) => e.node === 'node-7' || e.node === 'node-8')).toBe(false);
    } finally {
      await runtime.close();
    }
  });
});

describe('drain, reboot and resume tasks through the workload manager and the boot service', () => {
  const graph = drainRebootResumeGraph('cos-2.4', 'one_by_one');

  it('drains each node (waiting for its job), reboots it into the template, resumes it; the task log has each, in order', async () => {
    const site = parseSiteDefinition({
      nodes: [
        { name: 'c1', nid: 1, roles: ['compute'] },
        { name: 'c2', nid: 2, roles: ['compute'], wlm: { state: 'ALLOCATED', busySeconds: 200 } },
      ],
      bootTemplates: ['cos-2.4'],
      timing: { bootSeconds: 60, returnSeconds: 10 },
    });
    const runtime = await startTestRuntime({ site });
    try {
      const { view, site: state } = await runTaskGraph(runtime, { graph });
      expect(view.status).toBe('SUCCEEDED');
      expect(state.taskLog).toEqual([
        { node: 'c1', task: 'drain_compute', start: 0, end: 0, result: 'ok' },
        { node: 'c1', task: 'reboot_compute', start: 10, end: 70, result: 'ok' },
        { node: 'c1', task: 'resume_compute', start: 70, end: 70, result: 'ok' },
        // c2's job runs until 200: the drain ends then, and only then the reboot starts.
        { node: 'c2', task: 'drain_compute', start: 80, end: 200, result: 'ok' },
        { node: 'c2', task: 'reboot_compute', start: 200, end: 260, result: 'ok' },
        { node: 'c2', task: 'resume_compute', start: 260, end: 260, result: 'ok' },
      ]);
      for (const node of ['c1', 'c2']) expect(state.nodes[node]).toMatchObject({ wlmState: 'IDLE', bootCount: 1, drainCount: 1, resumeCount: 1 });
      expect(state.violations).toEqual([]);
    } finally {
      await runtime.close();
    }
  });

  it("leaves no claim of the run in a resumed node's reason on Slurm 24.11 without accounting (which keeps it through RESUME)", async () => {
    const site = parseSiteDefinition({
      nodes: [
        { name: 'c1', nid: 1, roles: ['compute'] },
        { name: 'c2', nid: 2, roles: ['compute'] },
      ],
      bootTemplates: ['cos-2.4'],
      timing: { bootSeconds: 60, returnSeconds: 10 },
      slurm: { version: '24.11.5', accountingStorage: 'none' },
    });
    const runtime = await startTestRuntime({ site });
    try {
      const { view, site: state } = await runTaskGraph(runtime, { graph });
      expect(view.status).toBe('SUCCEEDED');
      for (const node of ['c1', 'c2']) {
        expect(state.nodes[node]).toMatchObject({ wlmState: 'IDLE', bootCount: 1, resumeCount: 1 });
        expect([node, parseSiteMark(state.nodes[node]!.wlmReason)]).toEqual([node, undefined]);
      }
    } finally {
      await runtime.close();
    }
  });

  it('a node that fails to boot fails its reboot task, and its resume is blocked behind it', async () => {
    const site = parseSiteDefinition({
      nodes: [{ name: 'c1', nid: 1, roles: ['compute'], faults: { boot: 'fail' } }],
      bootTemplates: ['cos-2.4'],
      timing: { bootSeconds: 60 },
    });
    const runtime = await startTestRuntime({ site });
    try {
      const { view, site: state, runId } = await runTaskGraph(runtime, { graph });
      expect(view.nodes.c1).toEqual({ drain_compute: 'ACTIVE', reboot_compute: 'ERROR', resume_compute: 'BLOCKED' });
      expect(view.errors.c1?.reboot_compute).toMatch(/^failed: boot session t-[0-9a-f]{8}-[a-z2-7]+-[0-9a-f]{8} failed to boot the node$/);
      expect(view.blocked.c1).toEqual({ resume_compute: ['c1/reboot_compute'] });
      expect(state.taskLog.map((e) => [e.task, e.result])).toEqual([
        ['drain_compute', 'ok'],
        ['reboot_compute', 'failed'],
      ]);
      // The node stays drained with the run's claim: the site says which run and task drained it.
      expect(state.nodes.c1?.wlmReason).toBe(`rollout-task ${runId} kernel update task=drain_compute`);
      // Its lock went back when nothing more could run on it.
      expect(await runtime.store.locks.getLockOwners(['c1'])).toEqual(new Map());
    } finally {
      await runtime.close();
    }
  });
});
