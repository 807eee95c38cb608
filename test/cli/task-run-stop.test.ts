import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { runCliInProcess, runPrinted, startCli } from '../support/cli';
import { startSimulate, type SimulateProcess } from '../support/simulate-process';
import { drainRebootResumeGraph } from '../support/task-graph-runs';

/**
 * Issue 26, item 2, as an operator met it: `rollout deploy --graph` (drain, reboot, resume) over 8
 * simulated nodes with --max-in-transition 2 and a data directory; `rollout session stop ID` from
 * another process once a reboot runs. It answered `is RUNNING ... it ends STOPPED`, then the run kept
 * passing, dropped the stop at its continue-as-new and rebooted every node. Now it is STOPPING, ends
 * STOPPED (exit 1) with the other 6 nodes untouched on the site, and `rollout session resume` finishes
 * exactly what was left.
 */
const NODES = Array.from({ length: 8 }, (_, i) => `c${i + 1}`);
const GRAPH = drainRebootResumeGraph('cos-2.4');

async function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 120_000): Promise<T> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    const value = await probe();
    if (value !== undefined) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

let sim: SimulateProcess | undefined;
afterAll(async () => {
  await sim?.stop();
});

it('session stop of a running task run: STOPPING, the reboots in flight finish, it ends STOPPED with 6 nodes untouched; session resume finishes exactly the rest', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-task-stop-'));
  const site = path.join(dir, 'site.yaml');
  const graph = path.join(dir, 'graph.yaml');
  const dataDir = path.join(dir, 'data');
  await writeFile(
    site,
    stringify({
      nodes: NODES.map((name, i) => ({ name, nid: i + 1, roles: ['compute'] })),
      bootTemplates: ['cos-2.4'],
      timing: { bootSeconds: 100, returnSeconds: 10 },
    }),
  );
  await writeFile(graph, GRAPH);
  // The site outlives each rollout process (as a real one does): `rollout simulate`, sped up 20 times (a reboot takes 5 s).
  sim = await startSimulate(site, dir, ['--time-scale', '20']);
  const common = ['--data-dir', dataDir, '--json'];
  const deploy = startCli(['deploy', '--graph', graph, '--site-config', sim.profile, '--max-in-transition', '2', '--poll-interval', '10', ...common]);
  let stderr = '';
  deploy.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const id = await until(async () => /task run ([0-9a-f-]{36}) started/.exec(stderr)?.[1], 'the run id');
  await until(async () => {
    const got = await runCliInProcess(['session', 'get', id, ...common]);
    if (got.code !== 0) return undefined;
    const view = JSON.parse(got.stdout) as { nodes: Record<string, Record<string, string>> };
    return Object.values(view.nodes).some((tasks) => tasks['reboot_compute'] === 'TRANSITION') ? true : undefined;
  }, 'a reboot running');

  // From another process: the run's state on its item, and (through the owner's Step Functions endpoint) its execution.
  const running = await runCliInProcess(['session', 'status', id, ...common]);
  expect({ code: running.code, status: JSON.parse(running.stdout) as unknown }).toEqual({
    code: 0,
    status: { id, kind: 'tasks', state: 'RUNNING', ended: false, running: true },
  });

  const stop = await runCliInProcess(['session', 'stop', id, '--data-dir', dataDir]);
  expect(stop.code).toBe(0);
  expect(stop.stdout).toContain(`task run ${id} is STOPPING: what is in flight finishes, nothing new starts, and it ends STOPPED; then carry it on with: `);
  // The hint is whole: the data directory given, and the site the run used (recorded in the data directory).
  const resumeHint = /carry it on with: (rollout session resume .*)$/m.exec(stop.stdout)?.[1];
  expect(resumeHint).toBe(`rollout session resume ${id} --data-dir ${dataDir} --site-config ${sim.profile}`);
  const stopped = await deploy.done;
  expect(stopped.code).toBe(1);
  expect(JSON.parse(stopped.stdout)).toMatchObject({ runId: id, status: 'STOPPED' });
  const status = await runCliInProcess(['session', 'status', id, '--data-dir', dataDir]);
  expect({ code: status.code, stdout: status.stdout }).toEqual({ code: 0, stdout: `task run ${id}: STOPPED (ended), no execution runs it\n` });
  const unknown = await runCliInProcess(['session', 'status', 'no-such-id', '--data-dir', dataDir]);
  // An unknown id points to the list of the ids there, with the options given.
  expect({ code: unknown.code, stderr: unknown.stderr.trim() }).toEqual({
    code: 2,
    stderr: `error: no session with id 'no-such-id' (see 'rollout session list --data-dir ${dataDir}')`,
  });
  // The site: the two nodes whose reboot ran were drained and rebooted once (not resumed yet); the other 6 untouched.
  const atStop = await sim.fullState();
  const touched = [...new Set(atStop.taskLog.map((e) => e.node))];
  expect(touched).toHaveLength(2);
  expect(atStop.taskLog.every((e) => e.result === 'ok' && e.task !== 'resume_compute')).toBe(true);
  for (const node of NODES)
    expect({ node, ...counters(atStop.nodes[node]!) }).toEqual({
      node,
      ...(touched.includes(node) ? { drains: 1, boots: 1, resumes: 0 } : { drains: 0, boots: 0, resumes: 0 }),
    });
  const messages = (JSON.parse((await runCliInProcess(['session', 'get', id, ...common])).stdout) as { messages: string[] }).messages;
  expect(messages.filter((m) => m === 'Task run STOPPED')).toHaveLength(1);

  // The resume hint, pasted as printed (another process), runs exactly the tasks left: every node drained, rebooted and resumed once.
  const resumed = await runPrinted(resumeHint!);
  expect(resumed.code).toBe(0);
  expect(resumed.stdout).toContain(`Task run ${id}: SUCCEEDED`);
  const end = await sim.fullState();
  for (const node of NODES) expect({ node, ...counters(end.nodes[node]!) }).toEqual({ node, drains: 1, boots: 1, resumes: 1 });
  expect(end.violations).toEqual([]);
}, 300_000);

function counters(node: { drainCount: number; bootCount: number; resumeCount: number }) {
  return { drains: node.drainCount, boots: node.bootCount, resumes: node.resumeCount };
}
