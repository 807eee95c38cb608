import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCli, runCliInProcess } from '../support/cli';

const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');
const SITE = path.join(EXAMPLES, 'sites', 'fuel-granular-example.yaml');
const GRAPH = path.join(EXAMPLES, 'graphs', 'fuel-granular-example.yaml');

describe('rollout deploy --graph', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-deploy-graph-'));
  });

  it("runs the graph on the site: exit 0, each node's task states, the site's task log", async () => {
    const stateFile = path.join(dir, 'state.json');
    const result = await runCli(['deploy', '--site', SITE, '--graph', GRAPH, '--json', '--site-state-out', stateFile]);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as { status: string; nodes: Record<string, Record<string, string>>; blocked: object; elapsedSeconds: number };
    expect(json.status).toBe('SUCCEEDED');
    expect(json.nodes['node-8']).toEqual({ setup_network: 'ACTIVE', setup_services: 'ACTIVE' });
    expect(Object.keys(json.nodes)).toHaveLength(8);
    expect(json.blocked).toEqual({});
    expect(json.elapsedSeconds).toBe(300);
    const state = JSON.parse(await readFile(stateFile, 'utf8')) as { taskLog: { node: string; task: string; start: number }[] };
    expect(state.taskLog).toHaveLength(16);
    expect(state.taskLog[0]).toEqual({ node: 'node-1', task: 'setup_network', start: 0, end: 30, result: 'ok' });
    // Progress went to stderr, by task state.
    expect(result.stderr).toContain('tasks on 8 nodes: 16 active, 0 transition, 0 todo, 0 blocked, 0 error');
  });

  it('a failed task: exit 1, and the summary says what failed and why each blocked task waits', async () => {
    const site = path.join(dir, 'failing.yaml');
    const text = await readFile(SITE, 'utf8');
    await writeFile(
      site,
      text.replace(
        '{name: node-5, nid: 5, rack: rack01, roles: [controller]}',
        '{name: node-5, nid: 5, rack: rack01, roles: [controller], faults: {tasks: {setup_services: fail}}}',
      ),
    );
    const result = await runCliInProcess(['deploy', '--site', site, '--graph', GRAPH]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Task run [0-9a-f-]+: FAILED \(16 task runs on 8 nodes: 9 active, 1 error, 6 blocked\)/);
    expect(result.stdout).toContain(
      '    node-[1-4] (4)  setup_network ACTIVE, setup_services ACTIVE\n    node-5          setup_network ACTIVE, setup_services ERROR',
    );
    expect(result.stdout).toContain('    node-[6-8] (3)  setup_network BLOCKED, setup_services BLOCKED');
    expect(result.stdout).toContain('  Failed:\n    node-5 setup_services: failed: exit 1');
    expect(result.stdout).toContain('    node-8 setup_services: node-5/setup_services (failed: exit 1)');
  });

  it('bad input exits 2 before anything runs: an unknown task, an inverted --start/--end, a graph that names an unknown task', async () => {
    const unknown = await runCliInProcess(['deploy', '--site', SITE, '--graph', GRAPH, '--tasks', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("selection.tasks: unknown task 'nope'");
    const inverted = await runCliInProcess(['deploy', '--site', SITE, '--graph', GRAPH, '--start', 'setup_services', '--end', 'setup_network']);
    expect(inverted.code).toBe(2);
    expect(inverted.stderr).toContain("end: 'setup_network' does not come after --start 'setup_services'");
    const graph = path.join(dir, 'bad.yaml');
    await writeFile(graph, '- {id: a, type: shell, role: "*", requires: [b], parameters: {cmd: x}}\n');
    const bad = await runCliInProcess(['deploy', '--site', SITE, '--graph', graph, '--json']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`task graph ${graph}: [0].requires[0]: unknown task or stage 'b'`);
    expect(bad.stdout).toBe('');
  });

  it('a site profile with no transport refuses the command tasks it could never run, naming them, before anything starts', async () => {
    const profile = path.join(dir, 'http-only.yaml');
    await writeFile(
      profile,
      [
        'workloadManager: {type: slurmrestd, url: "http://127.0.0.1:9", apiVersion: v0.0.41, user: root, token: {env: SLURM_JWT}}',
        'allowInsecureHttp: true',
        'bootService: {type: bos, url: "http://127.0.0.1:9/apis/bos"}',
        'inventory: {type: hsm, url: "http://127.0.0.1:9/apis/smd"}',
        'provisioner: {type: http, url: "http://127.0.0.1:9"}',
        '',
      ].join('\n'),
    );
    const result = await runCliInProcess(['deploy', '--site-config', profile, '--graph', GRAPH]);
    expect(result.stderr).toContain("site profile: tasks.transport: the graph's shell task setup_network");
    expect(result.stderr).toContain('names no transport to reach them');
    expect(result.code).toBe(2);
  });

  it("with --strategy, runs the graph as each group's deploy phase: --json is the deployment report plus each group's task run", async () => {
    const strategy = path.join(dir, 'strategy.yaml');
    await writeFile(
      strategy,
      `groups:
  - {name: control, critical: true, depends_on: [], selectors: [{node_names: [node-1, node-2, node-3, node-4, node-5]}]}
  - {name: rest, critical: true, depends_on: [control], selectors: [{node_names: [node-6, node-7, node-8]}]}
`,
    );
    const result = await runCliInProcess(['deploy', '--site', SITE, '--graph', GRAPH, '--strategy', strategy, '--json']);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as { status: string; nodes: Record<string, string>; taskRuns: Record<string, { status: string; nodes: object }> };
    expect(json.status).toBe('SUCCEEDED');
    expect(Object.values(json.nodes)).toEqual(Array(8).fill('DEPLOYED'));
    expect(Object.keys(json.taskRuns)).toEqual(['control', 'rest']);
    expect(Object.keys(json.taskRuns.rest!.nodes)).toEqual(['node-6', 'node-7', 'node-8']);
    expect(json.taskRuns.control!.status).toBe('SUCCEEDED');
  });
});
