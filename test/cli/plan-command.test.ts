import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { runCli, runCliInProcess } from '../support/cli';
import { upgradeArgs } from '../../scripts/upgrade-args';

const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');
const SITE = path.join(EXAMPLES, 'sites', 'group-deployment-example.yaml');
const STRATEGY = path.join(EXAMPLES, 'strategies', 'shipyard-example.yaml');

interface PlanJson {
  order: string[];
  groups: Record<string, { critical: boolean; dependsOn: string[]; nodes: string[]; actionableNodes: string[] }>;
}

const plan = (...args: string[]) => runCliInProcess(['plan', 'deploy', '--site', SITE, ...args]);

async function planJson(...args: string[]): Promise<PlanJson> {
  const result = await plan(...args, '--json');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as PlanJson;
}

const group = (name: string, dependsOn: string[] = []) => ({ name, critical: false, depends_on: dependsOn, selectors: [] });

describe('rollout plan deploy', () => {
  let dir: string;
  const file = async (name: string, text: string) => {
    const target = path.join(dir, name);
    await writeFile(target, text);
    return target;
  };
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-plan-'));
  });

  it('prints a readable plan with the groups in dependency order', async () => {
    const result = await plan('--strategy', STRATEGY);

    expect(result.code).toBe(0);
    const headings = [...result.stdout.matchAll(/^\d+\. (\S+)/gm)].map((match) => match[1]);
    expect(headings).toEqual(['monitoring-nodes', 'ntp-node', 'control-nodes', 'compute-nodes-1', 'compute-nodes-2']);
    expect(result.stdout).toContain('Order: monitoring-nodes > ntp-node > control-nodes > compute-nodes-1 > compute-nodes-2');
    expect(result.stdout).toMatch(/^3\. control-nodes {2}\[critical\]\n {3}depends on: +ntp-node\n {3}nodes: +6 \(5 actionable\)/m);
    expect(result.stdout).toMatch(/criteria: +percent_successful_nodes 90, minimum_successful_nodes 3, maximum_failed_nodes 1/);
    expect(result.stdout).toContain('handled by an earlier group: mon03 (monitoring-nodes)');
    expect(result.stdout).toContain('Not in any group (not deployed): spare01, spare02');
  });

  it('prints the plan as JSON: order, and per group its nodes, actionable nodes and dependencies', async () => {
    const json = await planJson('--strategy', STRATEGY);

    expect(json.order).toEqual(['monitoring-nodes', 'ntp-node', 'control-nodes', 'compute-nodes-1', 'compute-nodes-2']);
    expect(Object.keys(json.groups)).toEqual(json.order);
    json.order.forEach((name, i) => {
      for (const dependency of json.groups[name]!.dependsOn) expect(json.order.indexOf(dependency)).toBeLessThan(i);
    });
    expect(json.groups['control-nodes']).toEqual({
      critical: true,
      dependsOn: ['ntp-node'],
      nodes: ['ctl01', 'ctl02', 'ctl03', 'ctl04', 'ctl05', 'mon03'],
      actionableNodes: ['ctl01', 'ctl02', 'ctl03', 'ctl04', 'ctl05'],
    });
    expect(json.groups['compute-nodes-2']).toMatchObject({ dependsOn: ['control-nodes'], nodes: expect.arrayContaining(['mon02']) as unknown });
    expect(json.groups['compute-nodes-2']!.actionableNodes).not.toContain('mon02');
    // Every node is submitted by exactly one group, and only nodes that group selects.
    const actionable = json.order.flatMap((name) => json.groups[name]!.actionableNodes);
    expect(new Set(actionable).size).toBe(actionable.length);
    expect(actionable).toHaveLength(25);
    for (const name of json.order) expect(json.groups[name]!.nodes).toEqual(expect.arrayContaining(json.groups[name]!.actionableNodes));
  });

  it('plans the fault variants of the example site exactly as the example (faults change runs, not plans)', async () => {
    const variants = ['group-deployment-ntp-prepare-fails.yaml', 'group-deployment-compute-deploy-fails.yaml'];
    const [example, ...faulty] = await Promise.all(
      [SITE, ...variants.map((name) => path.join(EXAMPLES, 'sites', name))].map((site) =>
        runCliInProcess(['plan', 'deploy', '--site', site, '--strategy', STRATEGY, '--json']),
      ),
    );
    expect(example!.code).toBe(0);
    for (const result of faulty) expect(result).toEqual(example);
  });

  it('draws the dependency graph as a Mermaid flowchart', async () => {
    const result = await plan('--strategy', STRATEGY, '--format', 'mermaid');

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^flowchart TD\n/);
    expect(result.stdout).toMatch(/g\d+_ntp_node --> g\d+_control_nodes/);
    expect(result.stdout).toMatch(/g\d+_control_nodes --> g\d+_compute_nodes_1/);
    expect(result.stdout).toMatch(/g\d+_control_nodes --> g\d+_compute_nodes_2/);
    expect(result.stdout.match(/-->/g)).toHaveLength(3);
  });

  it('plans one critical group "default" over the nodes given with --nodes', async () => {
    const json = await planJson('--nodes', 'cmp101, ctl01,cmp101');

    expect(json.order).toEqual(['default']);
    expect(json.groups.default).toEqual({ critical: true, dependsOn: [], nodes: ['ctl01', 'cmp101'], actionableNodes: ['ctl01', 'cmp101'] });
  });

  it('plans the default strategy, every node in one critical group, without --strategy or --nodes', async () => {
    const json = await planJson();

    expect(json.order).toEqual(['default']);
    expect(json.groups.default).toMatchObject({ critical: true, dependsOn: [] });
    expect(json.groups.default!.actionableNodes).toHaveLength(27);
  });

  it('exits 2 naming the group and the node_names that match no node, even beside known ones', async () => {
    const strategy = await file('unknown-node.yaml', stringify({ groups: [{ ...group('ntp'), selectors: [{ node_names: ['ntp01', 'ntp99'] }] }] }));
    const result = await plan('--strategy', strategy);

    expect(result.code).toBe(2);
    expect(result.stderr).toContain("groups[0] (ntp).node_names: no node of the site is named 'ntp99': every node a group names must exist");
    expect(result.stdout).toBe('');
  });

  it('exits 2 naming the nodes of --nodes that the site does not have', async () => {
    const result = await plan('--nodes', 'cmp101,cmp999');

    expect(result.code).toBe(2);
    expect(result.stderr).toContain("nodes[1]: unknown node 'cmp999'");
    expect(result.stdout).toBe('');
  });

  it.each([
    ['a dependency cycle', { groups: [group('a', ['c']), group('b', ['a']), group('c', ['b'])] }, /circular dependency: a, b, c/],
    ['a bad field', { groups: [group('a'), { ...group('b'), critical: 'maybe' }] }, /groups\[1\] \(b\)\.critical: must be true or false/],
  ])('exits 2 on a strategy with %s, naming the file, the groups and the problem', async (what, strategy, message) => {
    const strategyFile = await file(`${what.replace(/\W+/g, '-')}.yaml`, stringify(strategy));
    const result = await plan('--strategy', strategyFile);

    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`Invalid deployment strategy ${strategyFile}`);
    expect(result.stderr).toMatch(message);
  });

  it('exits 2 when given both --strategy and --nodes', async () => {
    const result = await plan('--strategy', STRATEGY, '--nodes', 'cmp101');

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/option '--strategy <file>' cannot be used with option '--nodes <names>'/);
  });

  it('exits 2 on an invalid site file, naming it and the field', async () => {
    const site = await file(
      'bad-site.yaml',
      stringify({
        nodes: [
          { name: 'n1', nid: 1 },
          { name: 'n2', nid: 1 },
        ],
      }),
    );
    const result = await runCliInProcess(['plan', 'deploy', '--site', site]);

    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`Invalid site file ${site}: nodes[1].nid: duplicate nid 1 (also nodes[0])`);
  });
});

describe('rollout plan upgrade (its own process)', () => {
  it('prints the steps node by node with gates and estimates, --json the same, and a Mermaid Gantt chart', async () => {
    const args = ['plan', ...upgradeArgs({ site: 'examples/sites/rolling-upgrade-64.yaml' })];
    const text = await runCli(args);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Upgrade plan for 'compute-nodes': 64 node\(s\) in 8 step\(s\), mode lockstep, at most 8 out of service at once/);
    expect(text.stdout).toMatch(/step 1 of 8: 8 node\(s\), starts \+0s, ends \+1h 36m/);
    expect(text.stdout).toMatch(/x3000c0s3b0n0 {2}drain \+0s, out \+1h 30m, back \+1h 36m {2}\[busy until \+1h 30m\]/);
    // An idle node of step 1 is out of service from its drain until the step, booted once its slowest node is quiet, is back.
    expect(text.stdout).toMatch(/x3000c0s1b0n0 {2}drain \+0s, out \+0s, back \+1h 36m\n/);

    const json = JSON.parse((await runCli([...args, '--mode', 'window', '--max-unavailable', '6', '--batches', '1', '--json'])).stdout) as {
      timeBase: string;
      cap: number;
      waves: { wave: number; nodes: string[] }[];
      nodes: Record<string, { wave: number; gates: string[] }>;
    };
    expect(json).toMatchObject({ timeBase: 'simulated', cap: 6 });
    // Simulated instants are seconds from the plan's start, never dates (core/time-format.ts).
    expect(json).toMatchObject({ startsAt: { secondsFromStart: 0, timeBase: 'simulated' }, endsAt: { timeBase: 'simulated' } });
    expect(Object.values(json.nodes).every((n) => JSON.stringify(n).match(/\d{4}-\d\d-\d\dT/) === null)).toBe(true);
    expect(json.waves.map((w) => w.nodes.length)).toEqual([1, 63]);
    expect(Object.keys(json.nodes)).toHaveLength(64);

    const mermaid = await runCli([...args, '--format', 'mermaid']);
    expect(mermaid.stdout.split('\n').slice(0, 5)).toEqual([
      'gantt',
      '  title Upgrade plan: 64 node(s), at most 8 out of service',
      '  dateFormat X',
      '  axisFormat %H:%M',
      '  section Step 1',
    ]);

    const refused = await runCli([...args.map((a) => (a === 'compute-nodes' ? 'compute-nodez' : a))]);
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringMatching(/startingLabel: no group 'compute-nodez'/) });
  }, 180_000);

  it("plans a CSM-style site's nodes by their xnames, read in Slurm by their nid names (every node was 'node-not-alive', 0 s)", async () => {
    const result = await runCliInProcess(['plan', ...upgradeArgs({ site: 'examples/sites/cray-csm-64.yaml', json: true })]);
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout) as { leftAlone: Record<string, string>; nodes: Record<string, unknown>; estimatedSeconds: number };
    expect(plan.leftAlone).toEqual({});
    expect(Object.keys(plan.nodes)).toHaveLength(64);
    expect(plan.estimatedSeconds).toBeGreaterThan(0);
  });
});
