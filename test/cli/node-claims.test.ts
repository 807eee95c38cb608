import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HELD_BY_ANOTHER_CONTROL_PLANE } from '../../core/site/node-claims';
import { TEST_SITE_UPGRADE, upgradeArgs } from '../../scripts/upgrade-args';
import { startCli, runCli, type CliResult } from '../support/cli';
import { interleavedRuns } from '../support/fault-invariants';
import { startServe } from '../support/serve';
import { startSimulate, type SimulateProcess } from '../support/simulate-process';

/**
 * Issue 22's scenario, as an operator with several terminals runs it against one standalone
 * `rollout simulate` site: an upgrade, a deployment and a drain/reboot/resume task graph over the
 * same nodes, through one `rollout serve`; two `rollout upgrade` processes with two data dirs; a task
 * run killed with kill -9 and resumed; a task run cancelled from another terminal. Judged by the
 * site's own log of who changed each node.
 */

const NODES = Array.from({ length: 8 }, (_, i) => `n0${i + 1}`);
const SITE = `nodes:
${NODES.map((name, i) => `  - {name: ${name}, nid: ${i + 1}, roles: [compute]}`).join('\n')}
groups: {compute: [${NODES.join(', ')}], upgrading: [], failed: []}
bootTemplates: [cos-2.4]
timing: {bootSeconds: 60, returnSeconds: 20, prepareSeconds: 60, deploySeconds: 60, taskSeconds: 10}
`;
const GRAPH = `tasks:
  - {id: drain, type: drain, role: [compute]}
  - {id: reboot, type: reboot, role: [compute], requires: [drain], parameters: {template: cos-2.4}}
  - {id: resume, type: resume, role: [compute], requires: [reboot]}
`;
/** `rollout upgrade` of the compute group in steps of 4, polled every 10 s, as JSON. */
const UPGRADE = { ...TEST_SITE_UPGRADE, stepSize: 4, pollInterval: 10, json: true };

let dir: string;
let siteFile: string;
let graphFile: string;
let sim: SimulateProcess | undefined;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-claims-'));
  siteFile = path.join(dir, 'site.yaml');
  graphFile = path.join(dir, 'graph.yaml');
  await writeFile(siteFile, SITE);
  await writeFile(graphFile, GRAPH);
  // 100 simulated seconds a second: a boot takes 0.6 s.
  sim = await startSimulate(siteFile, dir, ['--time-scale', '100']);
});
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** The site after the runs: no safety breach, no two runs' changes of a node interleaved, nothing left drained. */
async function expectSiteClean(): Promise<void> {
  const state = await sim!.fullState();
  expect(state.violations).toEqual([]);
  expect(interleavedRuns(state.changes)).toEqual([]);
  for (const name of NODES) expect({ name, state: state.nodes[name]!.wlmState }).toEqual({ name, state: 'IDLE' });
}

/** Starts `rollout deploy --graph` as its own process; resolves with its id (printed at start) once a reboot is under way. */
async function startGraphRun(args: string[]): Promise<{ runId: string; child: ReturnType<typeof startCli>['child']; done: Promise<CliResult> }> {
  const { child, done } = startCli([
    'deploy',
    '--site-config',
    sim!.profile,
    '--graph',
    graphFile,
    '--poll-interval',
    '10',
    '--max-in-transition',
    '4',
    ...args,
  ]);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const runId = await new Promise<string>((resolve, reject) => {
    void done.then((r) => reject(new Error(`rollout deploy --graph ended (${r.code}) before saying its id: ${r.stderr}`)));
    const look = () => {
      const match = /task run ([0-9a-f-]{36}) started/.exec(stderr);
      if (match) resolve(match[1]!);
      else setTimeout(look, 50);
    };
    look();
  });
  for (;;) {
    const state = await sim!.fullState();
    if (Object.values(state.nodes).some((n) => n.bootCount > 0)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { runId, child, done };
}

const expectExit = (result: CliResult, code: number) =>
  expect({ code: result.code, stderr: result.code === code ? '' : result.stderr }).toEqual({ code, stderr: '' });

it('one `rollout serve`: an upgrade, a deployment and a drain/reboot/resume task graph started together work on each node one at a time', async () => {
  const serve = await startServe(['--site-config', sim!.profile]);
  try {
    const endpoint = ['--endpoint', serve.endpoints.stepFunctionsEndpoint];
    const [upgrade, deploy, graph] = await Promise.all([
      runCli(upgradeArgs({ ...UPGRADE, endpoint: serve.endpoints.stepFunctionsEndpoint })),
      runCli(['deploy', ...endpoint, '--nodes', NODES.slice(0, 6).join(','), '--json']),
      runCli(['deploy', ...endpoint, '--graph', graphFile, '--poll-interval', '10', '--json']),
    ]);
    expectExit(upgrade, 0);
    expectExit(deploy, 0);
    expectExit(graph, 0);
    const upgraded = JSON.parse(upgrade.stdout) as { nodes: Record<string, { status: string }> };
    expect(Object.values(upgraded.nodes).map((n) => n.status)).toEqual(NODES.map(() => 'UPGRADED'));
    expect(JSON.parse(deploy.stdout)).toMatchObject({ status: 'SUCCEEDED' });
    expect(JSON.parse(graph.stdout)).toMatchObject({ status: 'SUCCEEDED' });
    // The task run said its id at once.
    expect(graph.stderr).toMatch(/^task run [0-9a-f-]{36} started/m);
    await expectSiteClean();
    // Each node drained and booted by the upgrade and by the graph, one after the other; prepared and deployed once.
    const state = await sim!.fullState();
    for (const name of NODES) expect([state.nodes[name]!.bootCount, state.nodes[name]!.drainCount]).toEqual([2, 2]);
    for (const name of NODES.slice(0, 6)) expect([state.nodes[name]!.prepareCount, state.nodes[name]!.deployCount]).toEqual([1, 1]);
  } finally {
    await serve.stop();
  }
}, 240_000);

it('two `rollout upgrade` processes with two data dirs (two control planes) never work on one node at once; a node the other claims is left alone and reported', async () => {
  const runs = await Promise.all(['a', 'b'].map((name) => runCli(upgradeArgs({ ...UPGRADE, siteConfig: sim!.profile, dataDir: path.join(dir, name) }))));
  for (const run of runs) expectExit(run, 0);
  const reports = runs.map((run) => JSON.parse(run.stdout) as { nodes: Record<string, { status: string; reason?: string }> });
  const state = await sim!.fullState();
  for (const name of NODES) {
    const upgradedBy = reports.filter((r) => r.nodes[name]?.status === 'UPGRADED').length;
    // Upgraded by one at least; booted once by each that upgraded it; any other record says why it was left alone.
    expect({ name, upgradedBy: upgradedBy > 0, booted: state.nodes[name]!.bootCount }).toEqual({ name, upgradedBy: true, booted: upgradedBy });
    for (const report of reports) {
      const node = report.nodes[name];
      if (node && node.status !== 'UPGRADED') expect({ name, reason: node.reason }).toEqual({ name, reason: HELD_BY_ANOTHER_CONTROL_PLANE });
    }
  }
  expect(reports.flatMap((r) => Object.values(r.nodes)).filter((n) => n.reason === HELD_BY_ANOTHER_CONTROL_PLANE).length).toBeGreaterThan(0);
  await expectSiteClean();
}, 240_000);

it('a task run killed with kill -9 is a session: listed, shown, and resumed to its end without rebooting a node twice or leaving one drained', async () => {
  const dataDir = path.join(dir, 'data');
  // Its id, printed as it starts; then kill -9 while reboots are under way.
  const { runId, child, done } = await startGraphRun(['--data-dir', dataDir]);
  child.kill('SIGKILL');
  expect((await done).code).toBeNull();

  const listed = await runCli(['session', 'list', '--data-dir', dataDir, '--json']);
  expectExit(listed, 0);
  expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ kind: 'TaskRun', runId, status: 'RUNNING' })]);
  // One process at a time opens a data directory: the two lists one after the other.
  const tasksOnly = await runCli(['session', 'list', '--data-dir', dataDir, '--kind', 'tasks', '--json']);
  const upgradesOnly = await runCli(['session', 'list', '--data-dir', dataDir, '--kind', 'upgrade', '--json']);
  expect([JSON.parse(tasksOnly.stdout), JSON.parse(upgradesOnly.stdout)]).toEqual([[expect.objectContaining({ runId })], []]);
  const shown = await runCli(['session', 'get', runId, '--data-dir', dataDir]);
  expectExit(shown, 0);
  expect(shown.stdout).toContain(runId);

  const resumed = await runCli(['session', 'resume', runId, '--data-dir', dataDir, '--site-config', sim!.profile, '--json']);
  expectExit(resumed, 0);
  expect(JSON.parse(resumed.stdout)).toMatchObject({ runId, status: 'SUCCEEDED' });
  const state = await sim!.fullState();
  for (const name of NODES)
    expect({ name, booted: state.nodes[name]!.bootCount, drained: state.nodes[name]!.drainCount }).toEqual({ name, booted: 1, drained: 1 });
  await expectSiteClean();
}, 240_000);

it('a task run another terminal cancels (`rollout session cancel ID --data-dir`) starts no task after it, lets its reboots end and leaves no node drained', async () => {
  // 5 simulated seconds a second: a reboot takes 12 s, time for another process to start and cancel.
  await sim!.stop();
  sim = await startSimulate(siteFile, dir, ['--time-scale', '5']);
  const dataDir = path.join(dir, 'data');
  const { runId, done } = await startGraphRun(['--data-dir', dataDir, '--json']);
  const cancelled = await runCli(['session', 'cancel', runId, '--data-dir', dataDir]);
  expectExit(cancelled, 0);
  expect(cancelled.stdout).toContain(`tasks ${runId} is CANCELLING`);
  const run = await done;
  expect(run.code).toBe(1);
  const view = JSON.parse(run.stdout) as { status: string; nodes: Record<string, Record<string, string>> };
  expect(view.status).toBe('CANCELLED');
  const state = await sim!.fullState();
  // Reboots in flight ended; nothing started after the cancel (at most 4 in transition: the other nodes never drained).
  for (const name of NODES)
    expect({ name, booted: state.nodes[name]!.bootCount <= 1, drained: /DRAIN/.test(state.nodes[name]!.wlmState) }).toEqual({
      name,
      booted: true,
      drained: false,
    });
  expect(NODES.filter((name) => state.nodes[name]!.drainCount === 0).length).toBeGreaterThan(0);
  expect(state.violations).toEqual([]);
  expect(interleavedRuns(state.changes)).toEqual([]);
  const shown = await runCli(['session', 'get', runId, '--data-dir', dataDir, '--json']);
  expectExit(shown, 0);
  expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'CANCELLED' });
}, 240_000);
