import { parseSiteDefinition, type SiteDefinitionInput } from '../../simulator';
import { siteStateContract } from '../../simulator/site-state-file';
import { SimClock } from '../../simulator/sim-clock';
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
