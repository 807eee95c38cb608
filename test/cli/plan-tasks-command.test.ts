import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../support/cli';

const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');
const SITE = path.join(EXAMPLES, 'sites', 'fuel-granular-example.yaml');
const GRAPH = path.join(EXAMPLES, 'graphs', 'fuel-granular-example.yaml');

const planTasks = (...args: string[]) => runCli(['plan', 'tasks', '--site', SITE, ...args]);

describe('rollout plan tasks', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-plan-tasks-'));
  });

  it("--json gives the spec's order: batches in the order they may start, each node's tasks in order", async () => {
    const result = await planTasks('--graph', GRAPH, '--json');
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as { batches: { group: string; nodes: string[] }[]; nodes: Record<string, string[]> };
    expect(json.batches.map(({ group, nodes }) => ({ group, nodes }))).toEqual([
      { group: 'primary-controller', nodes: ['node-1'] },
      { group: 'controller', nodes: ['node-4', 'node-2'] },
      { group: 'controller', nodes: ['node-3', 'node-5'] },
      { group: 'cinder', nodes: ['node-6'] },
      { group: 'network', nodes: ['node-7'] },
      { group: 'compute', nodes: ['node-8'] },
    ]);
    expect(Object.keys(json.nodes)).toEqual(['node-1', 'node-4', 'node-2', 'node-3', 'node-5', 'node-6', 'node-7', 'node-8']);
    for (const tasks of Object.values(json.nodes)) expect(tasks).toEqual(['setup_network', 'setup_services']);
  });

  it('prints a readable plan and a Mermaid flowchart', async () => {
    const text = await planTasks('--graph', GRAPH);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      'step 1  controller: node-4, node-2\n  step 2  controller: node-3, node-5\n  step 3  cinder: node-6\n  step 3  network: node-7',
    );
    expect(text.stdout).toContain('1. setup_network {"cmd":"run_setup_network.sh","timeout":120}');
    const mermaid = await planTasks('--graph', GRAPH, '--format', 'mermaid');
    expect(mermaid.stdout.split('\n')).toEqual(expect.arrayContaining(['flowchart TD', '  b1["controller<br/>node-4, node-2"]', '  b1 --> b2', '  b4 --> b5']));
  });

  it('selects nodes and tasks like fuel node', async () => {
    const result = await planTasks('--graph', GRAPH, '--json', '--nodes', 'node-8,node-3', '--start', 'setup_services');
    expect(JSON.parse(result.stdout).nodes).toEqual({ 'node-3': ['setup_services'], 'node-8': ['setup_services'] });
    const unknown = await planTasks('--graph', GRAPH, '--skip', 'nope', '--nodes', 'node-99');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("skip: unknown task 'nope'");
  });

  it('refuses a bad graph before anything, naming the file and every problem', async () => {
    const bad = path.join(dir, 'bad.json');
    await writeFile(
      bad,
      JSON.stringify([
        { id: 'a', type: 'shell', role: '*', requires: ['b'], parameters: { cmd: 'x' }, condition: 'os.system(1)' },
        { id: 'g', type: 'group', role: 'ceph-osd', parameters: { strategy: { type: 'parallel', amount: -1 } } },
      ]),
    );
    const result = await planTasks('--graph', bad);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`task graph ${bad}`);
    expect(result.stderr).toContain("[0].requires[0]: unknown task or stage 'b'");
    expect(result.stderr).toContain('[0].condition: unknown function');
    expect(result.stderr).toContain('[1].parameters.strategy.amount: amount must be at least 1');
  });

  it('warns about a group whose role no node has', async () => {
    const graph = path.join(dir, 'ceph.yaml');
    await writeFile(graph, "- {id: ceph, type: group, role: ceph-osd}\n- {id: a, type: shell, role: '*', parameters: {cmd: x}}\n");
    const result = await planTasks('--graph', graph, '--json');
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("warning: [0].role: no node of the site has role 'ceph-osd': group ceph deploys nothing");
  });
});
