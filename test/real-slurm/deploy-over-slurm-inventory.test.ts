import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCli, type CliResult } from '../support/cli';
import { describeRealSlurm } from '../support/describe-real-slurm';
import { RealSlurmCluster } from '../../scripts/slurm/real-slurm';

/**
 * A group deployment against a real Slurm, as a process: the slurm inventory (roles and tags as
 * slurm.conf features), the command provisioner preparing each group, and a task graph's shell,
 * drain and resume tasks as each group's deploy phase, run on the nodes through a pdsh stand-in.
 * One cluster of 6 slurmds.
 */
describeRealSlurm('rollout deploy over the slurm inventory against a real Slurm', (release) => {
  let cluster: RealSlurmCluster;
  let dir: string;

  beforeAll(async () => {
    cluster = await RealSlurmCluster.start({
      release,
      nodes: 6,
      rebootDelaySeconds: 1,
      restd: false,
      // Roles and tags as a site would keep them in slurm.conf: the slurm inventory reads role:<role> and tags.
      features: {
        c01: ['role:controller', 'control', 'rack:r1'],
        c02: ['role:compute', 'compute', 'rack:r1'],
        c03: ['role:compute', 'compute', 'rack:r1'],
        c04: ['role:compute', 'compute', 'rack:r2'],
        c05: ['role:compute', 'compute', 'rack:r2'],
        c06: ['role:compute', 'compute', 'rack:r2'],
      },
    });
    dir = mkdtempSync(path.join(tmpdir(), 'rollout-real-slurm-deploy-'));
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const json = <T>(result: CliResult): T => {
    try {
      return JSON.parse(result.stdout) as T;
    } catch {
      throw new Error(`rollout printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
  };

  test('a group deployment over the slurm inventory: the command provisioner prepares each group, the graph (shell, drain, resume) is its deploy phase', async () => {
    const log = path.join(dir, 'deploy.log');
    // pdsh -S as it answers on one host: the command once per node of the hostlist, as that node, each line `<node>: ...`.
    const pdsh = path.join(dir, 'pdsh.sh');
    writeFileSync(pdsh, 'for node in $(scontrol show hostnames "$1"); do (ROLLOUT_NODE=$node sh -c "$2") 2>&1 | sed "s/^/$node: /"; done\n');
    // The provisioner command: logs its action and hostlist, and reports the nodes as one hostlist line.
    const provision = path.join(dir, 'provision.sh');
    writeFileSync(provision, `echo "$1 $2" >> '${log}'\necho "node=$2 ok"\n`);
    const profile = path.join(dir, 'deploy-profile.yaml');
    writeFileSync(
      profile,
      [
        'transport: {type: local}',
        'workloadManager: {type: scontrol}',
        'bootService: {type: slurm-reboot}',
        'inventory: {type: slurm}',
        `provisioner: {type: command, commands: {prepare: "sh ${provision} prepare {nodes}", deploy: "sh ${provision} deploy {nodes}"}}`,
        `tasks: {nodeExec: "sh ${pdsh} {nodes} {command}"}`,
        '',
      ].join('\n'),
    );
    const strategy = path.join(dir, 'strategy.yaml');
    writeFileSync(
      strategy,
      `groups:
  - {name: control, critical: true, depends_on: [], selectors: [{node_tags: [control]}], success_criteria: {minimum_successful_nodes: 1}}
  - {name: compute, critical: false, depends_on: [control], selectors: [{node_tags: [compute]}], success_criteria: {percent_successful_nodes: 50}}
`,
    );
    const on = ['controller', 'compute'];
    const graph = path.join(dir, 'graph.yaml');
    writeFileSync(
      graph,
      JSON.stringify({
        tasks: [
          { id: 'controller', type: 'group', role: ['controller'], parameters: { strategy: { type: 'one_by_one' } } },
          { id: 'compute', type: 'group', role: ['compute'], requires: ['controller'], parameters: { strategy: { type: 'parallel', amount: 2 } } },
          { id: 'setup_network', type: 'shell', groups: on, parameters: { cmd: `echo "task $ROLLOUT_NODE setup_network" >> '${log}'` } },
          { id: 'quiesce', type: 'drain', groups: on, requires: ['setup_network'], parameters: { reason: 'deploying' } },
          // Runs while Slurm shows the node drained, as scontrol tells the task; fails on c06.
          {
            id: 'setup_services',
            type: 'shell',
            groups: on,
            requires: ['quiesce'],
            parameters: {
              cmd: `echo "task $ROLLOUT_NODE setup_services $(scontrol show node "$ROLLOUT_NODE" | grep -o 'State=[A-Z+_]*')" >> '${log}'; [ "$ROLLOUT_NODE" != c06 ]`,
            },
          },
          { id: 'back', type: 'resume', groups: on, requires: ['setup_services'] },
        ],
      }),
    );

    const result = await startCli(['deploy', '--site-config', profile, '--strategy', strategy, '--graph', graph, '--poll-interval', '1', '--json'], cluster.env)
      .done;
    const report = json<{
      status: string;
      nodes: Record<string, string>;
      taskRuns: Record<string, { status: string; nodes: Record<string, Record<string, string>> }>;
    }>(result);
    // The compute group meets its 50% with c06 failed; no critical group failed.
    expect([result.code, report.status]).toEqual([0, 'SUCCEEDED']);
    expect(report.nodes).toEqual({ c01: 'DEPLOYED', c02: 'DEPLOYED', c03: 'DEPLOYED', c04: 'DEPLOYED', c05: 'DEPLOYED', c06: 'FAILED' });
    expect(Object.keys(report.taskRuns)).toEqual(['control', 'compute']);
    expect(report.taskRuns.control!.nodes).toEqual({ c01: { setup_network: 'ACTIVE', quiesce: 'ACTIVE', setup_services: 'ACTIVE', back: 'ACTIVE' } });
    expect(report.taskRuns.compute!.nodes.c06).toMatchObject({ setup_network: 'ACTIVE', quiesce: 'ACTIVE', setup_services: 'ERROR' });
    expect(report.taskRuns.compute!.nodes.c06!.back).not.toBe('ACTIVE');

    const lines = readFileSync(log, 'utf8').trim().split('\n');
    // Prepared by the provisioner command, one hostlist per group, control first; its deploy phase is the graph.
    expect(lines.filter((l) => /^(prepare|deploy) /.test(l))).toEqual(['prepare c01', 'prepare c[02-06]']);
    const tasks = lines.filter((l) => l.startsWith('task '));
    // Every node ran each shell task once, setup_network before setup_services, the controller before any compute node.
    expect(
      tasks
        .filter((l) => l.includes('setup_network'))
        .map((l) => l.split(' ')[1])
        .sort(),
    ).toEqual(['c01', 'c02', 'c03', 'c04', 'c05', 'c06']);
    const services = tasks.filter((l) => l.includes('setup_services'));
    expect(services.map((l) => l.split(' ')[1]).sort()).toEqual(['c01', 'c02', 'c03', 'c04', 'c05', 'c06']);
    for (const line of services) expect(line).toMatch(/State=IDLE\+DRAIN/);
    for (const node of cluster.nodes)
      expect(tasks.indexOf(`task ${node} setup_network`)).toBeLessThan(tasks.findIndex((l) => l.startsWith(`task ${node} setup_services`)));
    expect(tasks.findIndex((l) => l.startsWith('task c01 setup_services'))).toBeLessThan(tasks.findIndex((l) => / c0[2-6] /.test(l)));

    // Resumed where the graph got that far; c06 stays drained by its task, with the task's reason.
    const nodes = await cluster.readNodes();
    for (const node of nodes.filter((n) => n.name !== 'c06')) expect([node.name, node.base, node.flags]).toEqual([node.name, 'IDLE', []]);
    const c06 = nodes.find((n) => n.name === 'c06')!;
    // The graph's drain names its task run first (core/site/node-claims.ts), then the task's own reason.
    expect([c06.flags, c06.reason]).toEqual([['DRAIN'], expect.stringMatching(/^rollout-task [0-9a-f-]{36} deploying task=quiesce$/)]);
    await cluster.scontrol('update', 'NodeName=c06', 'State=RESUME');
    await cluster.waitForNode('c06', (n) => n.base === 'IDLE' && n.flags.length === 0, 'resumed', 30_000);
  }, 240_000);
});
