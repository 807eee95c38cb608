import { parseSiteDefinition, type SiteDefinitionInput } from '../../simulator';
import { siteStateContract } from '../../simulator/site-state-file';
import { SimClock } from '../../time/sim-clock';
import { SiteSimulator } from '../../simulator/site-simulator';

/** A simulator whose clock the test moves by hand (simulated ms since the start). */
function simulate(input: Pick<SiteDefinitionInput, 'nodes'> & Partial<SiteDefinitionInput>) {
  let elapsed = 0;
  const clock = new SimClock({ timeScale: 1, startAt: 0, realNow: () => elapsed });
  const sim = new SiteSimulator(parseSiteDefinition(input), clock);
  return { sim, at: (seconds: number) => ((elapsed = seconds * 1000), sim) };
}

describe('task-graph tasks on the simulated site', () => {
  const nodes: SiteDefinitionInput['nodes'] = [
    { name: 'node-1', nid: 1, roles: ['controller'], faults: { tasks: { setup_network: 'fail' } } },
    { name: 'node-2', nid: 2, roles: ['compute'], faults: { tasks: { setup_services: 'hang' } } },
  ];

  it('runs each task for taskSeconds, fails or hangs it as the node faults say, and logs every run', () => {
    const { sim, at } = simulate({ nodes, timing: { taskSeconds: 20 } });
    sim.tasks.start('node-2', 'setup_network', 600);
    sim.tasks.start('node-1', 'setup_network', 600);
    expect(at(10).state().taskLog).toEqual([
      { node: 'node-2', task: 'setup_network', start: 0 },
      { node: 'node-1', task: 'setup_network', start: 0 },
    ]);
    at(20);
    sim.tasks.start('node-2', 'setup_services', 100);
    const state = at(500).state();
    expect(state.taskLog).toEqual([
      { node: 'node-2', task: 'setup_network', start: 0, end: 20, result: 'ok' },
      { node: 'node-1', task: 'setup_network', start: 0, end: 20, result: 'failed' },
      { node: 'node-2', task: 'setup_services', start: 20, end: 120, result: 'timeout' },
    ]);
    expect(siteStateContract(state).taskLog).toEqual(state.taskLog);
    expect(state.violations).toEqual([]);
  });

  it('reports two tasks at once on one node as a violation', () => {
    const { sim, at } = simulate({ nodes });
    sim.tasks.start('node-1', 'a', 600);
    at(5);
    sim.tasks.start('node-1', 'b', 600);
    expect(sim.violations).toEqual([expect.stringContaining('task b started on node-1 while a still ran there')]);
    expect(() => sim.tasks.start('node-9', 'a', 600)).toThrow("unknown node 'node-9'");
  });
});

describe('the head node runs task-graph commands on the nodes (pdsh, ssh)', () => {
  const nodes: SiteDefinitionInput['nodes'] = [
    { name: 'node-1', nid: 1, faults: { tasks: { net: 'hang' } } },
    { name: 'node-2', nid: 2, faults: { tasks: { net: 'fail' } } },
    { name: 'node-3', nid: 3 },
  ];
  const taskCommand = (task: string, timeout: number) =>
    `ROLLOUT_TASK='${task}' timeout ${timeout} /bin/sh -c 'x.sh' </dev/null >>'/var/tmp/rollout-task-${task}.log' 2>&1; echo "rollout-task-exit=$?"`;
  const quoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

  it("pdsh over a hostlist: each node runs the task in simulated time; a hung one ends as timeout at its timeout (124); each status on its node's line", () => {
    const { sim, at } = simulate({ nodes, timing: { taskSeconds: 30 } });
    const invocation = sim.headNode.send('i-00000000000000001', [`pdsh -S -w 'node-[1-3]' ${quoted(taskCommand('net', 100))}`], 600);
    expect(sim.headNode.get(invocation.commandId, invocation.instanceId)?.status).toBe('InProgress');
    at(30);
    expect(sim.headNode.get(invocation.commandId, invocation.instanceId)?.status).toBe('InProgress');
    at(100);
    const done = sim.headNode.get(invocation.commandId, invocation.instanceId)!;
    // The node's shell ends with the echo of the status: pdsh -S sees 0 from every node.
    expect(done.status).toBe('Success');
    expect(done.invocation.stdout).toBe('node-1: rollout-task-exit=124\nnode-2: rollout-task-exit=1\nnode-3: rollout-task-exit=0\n');
    expect(sim.state().taskLog).toEqual([
      { node: 'node-1', task: 'net', start: 0, end: 100, result: 'timeout' },
      { node: 'node-2', task: 'net', start: 0, end: 30, result: 'failed' },
      { node: 'node-3', task: 'net', start: 0, end: 30, result: 'ok' },
    ]);
  });

  it('ssh to one node; an unknown node, an unknown option or another command is refused as a shell would', () => {
    const { sim, at } = simulate({ nodes, timing: { taskSeconds: 30 } });
    const run = (line: string) => {
      const invocation = sim.headNode.send('i-00000000000000001', [line], 600);
      sim.headNode.get(invocation.commandId, invocation.instanceId);
      at(60);
      return sim.headNode.get(invocation.commandId, invocation.instanceId)!.invocation;
    };
    expect(run(`ssh -o BatchMode=yes node-3 ${quoted(taskCommand('svc', 100))}`)).toMatchObject({ exitCode: 0, stdout: 'rollout-task-exit=0\n' });
    expect(run(`ssh node-9 ${quoted(taskCommand('svc', 100))}`)).toMatchObject({ exitCode: 255, stderr: 'ssh: Could not resolve hostname node-9\n' });
    expect(run(`pdsh -X -w node-3 ${quoted(taskCommand('svc', 100))}`)).toMatchObject({ exitCode: 1, stderr: 'pdsh: unsupported option -X\n' });
    expect(run(`pdsh -S -w node-3 ${quoted('rm -rf /')}`).stderr).toBe('pdsh@head: node-3: sim-node: only task-graph task commands are simulated: rm -rf /\n');
    expect(sim.state().taskLog.map((e) => e.task)).toEqual(['svc']);
  });
});
