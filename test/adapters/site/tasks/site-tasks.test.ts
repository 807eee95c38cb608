import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LocalTransport } from '../../../../adapters/site/commands/local-transport';
import { CommandTransportError } from '../../../../ports/command-transport';
import { bootSessionName, SiteTaskExecutor, type TaskCommands } from '../../../../adapters/site/tasks/site-tasks';
import { headNodeCommands } from '../../../../adapters/site/tasks/node-commands';
import type { TaskType } from '../../../../core/task-graph';
import type { CommandResult, CommandTransport } from '../../../../ports/command-transport';
import type { BootService, WorkloadManager, WlmNode } from '../../../../ports/site';
import type { RunningTask, TaskExecution, TaskInvocation, TaskOutcome } from '../../../../ports/task-executor';
import { taskOfBootSession } from '../../../../simulator/models/task-runner';

const RUN_ID = '0a1b2c3d-0000-4000-a000-000000000001';
const invocation = (node: string, task: string, type: TaskType, parameters: Record<string, unknown>, timeoutSeconds = 60): TaskInvocation => ({
  op: `${node}/${task}`,
  node,
  task,
  type,
  parameters,
  timeoutSeconds,
  name: `rollout-task-run1-${node}-${task}`,
  runId: RUN_ID,
});

const noSite = { workloadManager: {} as WorkloadManager, bootService: {} as BootService };

/** Polls the executor (real time) until every task has an outcome. */
async function untilDone(executor: SiteTaskExecutor, invocations: TaskInvocation[], started: Map<string, TaskExecution>): Promise<Map<string, TaskOutcome>> {
  const outcomes = new Map<string, TaskOutcome>();
  for (let round = 0; round < 400 && outcomes.size < invocations.length; round++) {
    const running: RunningTask[] = invocations
      .filter((i) => !outcomes.has(i.op))
      .map((i) => ({ invocation: i, execution: started.get(i.op)!, startedAt: Date.now() }));
    for (const [op, seen] of await executor.poll(running)) if (seen.outcome) outcomes.set(op, seen.outcome);
    await new Promise((r) => setTimeout(r, 25));
  }
  return outcomes;
}

/**
 * Command tasks for real: the scripts run by /bin/sh under coreutils `timeout` on this host, through
 * LocalTransport and a pdsh stand-in on PATH (test/support/fake-pdsh.mjs), so what reaches a node is
 * exactly what a site's pdsh would hand its shell.
 */
describe('SiteTaskExecutor: command tasks through a head node (local transport, pdsh on PATH)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'task-exec-'));
  const pdsh = join(dir, 'pdsh');
  writeFileSync(pdsh, `#!/bin/sh\nexec '${process.execPath}' '${resolve('test/support/fake-pdsh.mjs')}' "$@"\n`);
  chmodSync(pdsh, 0o755);
  const puppet = join(dir, 'puppet');
  // puppet apply --detailed-exitcodes: 2 means "changes made" (success), 4 "failures".
  writeFileSync(puppet, '#!/bin/sh\nexit "${PUPPET_EXIT:-0}"\n');
  chmodSync(puppet, 0o755);
  const transport = new LocalTransport({ env: { PATH: `${dir}:/usr/bin:/bin`, FAKE_PDSH_UNREACHABLE: 'n9', PUPPET_EXIT: '2' } });
  const executor = (fanout = 256) =>
    new SiteTaskExecutor({ site: noSite, clock: { now: () => Date.now() }, commands: { transport, nodeExec: 'pdsh -S -w {nodes} {command}', fanout } });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs each type on its nodes: shell (in cwd, ROLLOUT_TASK set), upload_file, puppet (2 is success), each node one outcome', async () => {
    const out = join(dir, 'out');
    const target = join(dir, "a dir with 'quotes'", 'motd');
    const tasks = [
      invocation('n1', 'hello', 'shell', { cmd: `echo "$ROLLOUT_TASK $ROLLOUT_NODE $(pwd)" >> '${out}'`, cwd: dir }),
      invocation('n2', 'hello', 'shell', { cmd: `echo "$ROLLOUT_TASK $ROLLOUT_NODE $(pwd)" >> '${out}'`, cwd: dir }),
      invocation('n1', 'motd', 'upload_file', { path: target, data: "it's $(id) `id`\n" }),
      invocation('n1', 'site_pp', 'puppet', { puppet_manifest: '/etc/puppet/site.pp', puppet_modules: '/etc/puppet/modules' }),
    ];
    const started = await executor().start(tasks);
    // The two alike shell tasks went out as one pdsh command.
    expect(new Set(tasks.slice(0, 2).map((t) => (started.get(t.op) as { id: string }).id)).size).toBe(1);
    const outcomes = await untilDone(executor(), tasks, started);
    expect(Object.fromEntries(outcomes)).toEqual({
      'n1/hello': { result: 'ok' },
      'n2/hello': { result: 'ok' },
      'n1/motd': { result: 'ok' },
      'n1/site_pp': { result: 'ok' },
    });
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).sort()).toEqual([`hello n1 ${dir}`, `hello n2 ${dir}`]);
    expect(readFileSync(target, 'utf8')).toBe("it's $(id) `id`\n");
  });

  it('reports a failing command, a command past its timeout, and an unreachable node, each per node', async () => {
    const tasks = [
      invocation('n1', 'flaky', 'shell', { cmd: 'test "$ROLLOUT_NODE" = n1 || exit 3' }),
      invocation('n2', 'flaky', 'shell', { cmd: 'test "$ROLLOUT_NODE" = n1 || exit 3' }),
      invocation('n9', 'flaky', 'shell', { cmd: 'test "$ROLLOUT_NODE" = n1 || exit 3' }),
      invocation('n1', 'slow', 'shell', { cmd: 'sleep 5' }, 1),
    ];
    const outcomes = await untilDone(executor(), tasks, await executor().start(tasks));
    expect(outcomes.get('n1/flaky')).toEqual({ result: 'ok' });
    expect(outcomes.get('n2/flaky')).toEqual({ result: 'failed', detail: 'exit 3' });
    expect(outcomes.get('n9/flaky')).toEqual({ result: 'failed', detail: 'no exit status from the node: pdsh@head: n9: ssh exited with exit code 255' });
    expect(outcomes.get('n1/slow')).toEqual({ result: 'timeout', detail: 'stopped on the node after 1 s' });
  });

  it("where the site maps names (CSM), reaches the nodes by the workload manager's names: one nid hostlist, outcomes back on the session's names", async () => {
    const wlm: Record<string, string> = { x3000c0s1b0n0: 'nid000001', x3000c0s1b0n1: 'nid000002' };
    const nodeNames = {
      toWorkloadManager: async (names: readonly string[]) => new Map(names.flatMap((n) => (wlm[n] ? [[n, wlm[n]] as [string, string]] : []))),
      toInventory: async () => new Map<string, string>(),
    };
    const scripts: string[] = [];
    const seen: CommandTransport = {
      run: (script, options) => transport.run(script, options),
      start: (script, options) => (scripts.push(script), transport.start(script, options)),
      poll: (id) => transport.poll(id),
      findStarted: (...args) => transport.findStarted(...args),
    };
    const mapped = () =>
      new SiteTaskExecutor({
        site: { ...noSite, nodeNames },
        clock: { now: () => Date.now() },
        commands: { transport: seen, nodeExec: 'pdsh -S -w {nodes} {command}', fanout: 256 },
      });
    const out = join(dir, 'mapped-out');
    // x3000c0s2b0n0 has no nid in the map: it keeps its own name.
    const tasks = ['x3000c0s1b0n0', 'x3000c0s1b0n1', 'x3000c0s2b0n0'].map((node) =>
      invocation(node, 'who', 'shell', { cmd: `echo "$ROLLOUT_NODE" >> '${out}'` }),
    );
    const outcomes = await untilDone(mapped(), tasks, await mapped().start(tasks));
    expect(scripts).toHaveLength(1);
    expect(scripts[0]).toMatch(/^pdsh -S -w 'nid\[000001-000002\],x3000c0s2b0n0' /);
    expect(Object.fromEntries(outcomes)).toEqual({
      'x3000c0s1b0n0/who': { result: 'ok' },
      'x3000c0s1b0n1/who': { result: 'ok' },
      'x3000c0s2b0n0/who': { result: 'ok' },
    });
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).sort()).toEqual(['nid000001', 'nid000002', 'x3000c0s2b0n0']);
  });

  it('splits a long node list into commands of `fanout` nodes, each a quoted hostlist', async () => {
    const tasks = ['n1', 'n2', 'n3', 'n4', 'n5'].map((node) => invocation(node, 't', 'shell', { cmd: 'true' }));
    const started = await executor(2).start(tasks);
    expect(new Set([...started.values()].map((e) => (e as { id: string }).id)).size).toBe(3);
    const outcomes = await untilDone(executor(2), tasks, started);
    expect([...outcomes.values()].every((o) => o.result === 'ok')).toBe(true);
  });
});

describe('head-node commands', () => {
  it('quote every node and the command as one word each, and refuse a name that could reach a shell', () => {
    expect(headNodeCommands('pdsh -S -w {nodes} {command}', ['n1', 'n2', 'n3'], "echo 'x'", 256)).toEqual([
      { nodes: ['n1', 'n2', 'n3'], script: "pdsh -S -w 'n[1-3]' 'echo '\\''x'\\'''" },
    ]);
    expect(headNodeCommands('ssh {node} {command}', ['a', 'b'], 'true', 256).map((c) => c.script)).toEqual(["ssh 'a' 'true'", "ssh 'b' 'true'"]);
    expect(() => headNodeCommands('ssh {node} {command}', ['n1', '$(id)'], 'true', 256)).toThrow('nodes[1]');
  });
});

/** A transport that has started one command and answers its poll as told. */
function scriptedTransport(poll: () => Promise<CommandResult | undefined>): CommandTransport {
  return { run: () => Promise.reject(new Error('not used')), start: async () => 'cmd-1', poll, findStarted: () => Promise.reject(new Error('not used')) };
}

describe('SiteTaskExecutor: what the transport says about a command', () => {
  const tasks = [invocation('n1', 't', 'shell', { cmd: 'true' }, 30)];
  const running = (executor: SiteTaskExecutor) =>
    executor.start(tasks).then((started) => tasks.map((i) => ({ invocation: i, execution: started.get(i.op)!, startedAt: 0 })));
  const build = (commands: TaskCommands) => new SiteTaskExecutor({ site: noSite, clock: { now: () => 0 }, commands });

  it('SSM TimedOut ends the tasks as timeout; a local command whose process is gone fails them; an API error is the site failing (retried)', async () => {
    const timedOut = build({
      nodeExec: 'pdsh -w {nodes} {command}',
      fanout: 256,
      transport: scriptedTransport(() => Promise.reject(new CommandTransportError('x', { transport: 'ssm', status: 'TimedOut' }))),
    });
    expect((await timedOut.poll(await running(timedOut))).get('n1/t')?.outcome).toEqual({ result: 'timeout', detail: 'the head-node command outlived 90 s' });
    const gone = build({
      nodeExec: 'pdsh -w {nodes} {command}',
      fanout: 256,
      transport: scriptedTransport(() =>
        Promise.reject(new CommandTransportError('no local command cmd-1 was started by this process', { transport: 'local' })),
      ),
    });
    expect((await gone.poll(await running(gone))).get('n1/t')?.outcome).toEqual({
      result: 'failed',
      detail: 'no local command cmd-1 was started by this process',
    });
    const throttled = build({
      nodeExec: 'pdsh -w {nodes} {command}',
      fanout: 256,
      transport: scriptedTransport(() => Promise.reject(new CommandTransportError('ThrottlingException', { transport: 'ssm' }))),
    });
    await expect(throttled.poll(await running(throttled))).rejects.toMatchObject({ name: 'SiteServiceError', service: 'head-node' });
  });

  it('a site without a command transport runs no command task, and says how to give it one', () => {
    const executor = new SiteTaskExecutor({ site: noSite, clock: { now: () => 0 } });
    expect(executor.unsupported('shell')).toMatch(/give the site profile a transport/);
    expect(executor.unsupported('drain')).toBeUndefined();
  });
});

describe('SiteTaskExecutor: drain, resume and reboot through the site services', () => {
  function fakeSite(node: Partial<WlmNode>) {
    const calls: string[] = [];
    const state: WlmNode = { name: 'n1', base: 'ALLOCATED', flags: [], ...node };
    const workloadManager = {
      getNodes: async () => new Map([['n1', { ...state }]]),
      drain: async (name: string, reason: string) => void calls.push(`drain ${name} ${reason}`),
      resume: async (name: string, reason?: string) => void calls.push(`resume ${name} ${reason}`),
    } as unknown as WorkloadManager;
    const sessions = new Map<string, { nodes: Record<string, 'booting' | 'succeeded'> }>();
    const bootService = {
      createSession: async (request: { name: string; templateName: string; limit: { nodes: string[] } }) => {
        calls.push(`boot ${request.name} ${request.templateName} ${request.limit.nodes.join(',')}`);
        sessions.set(request.name, { nodes: { n1: 'booting' } });
        return { name: request.name, status: 'running', nodes: { n1: 'booting' } };
      },
      getSession: async (name: string) => {
        const session = sessions.get(name);
        return session && { name, status: 'running', nodes: session.nodes };
      },
    } as unknown as BootService;
    return { calls, state, sessions, site: { workloadManager, bootService } };
  }
  let now = 0;
  const clock = { now: () => now };

  it('a drain carries the task in its Slurm reason and is done once the node runs no job; its timeout applies', async () => {
    const { calls, state, site } = fakeSite({});
    const executor = new SiteTaskExecutor({ site, clock });
    const task = invocation('n1', 'drain_it', 'drain', { reason: 'kernel update' }, 100);
    const execution = (await executor.start([task])).get(task.op)!;
    expect(calls).toEqual([`drain n1 rollout-task ${RUN_ID} kernel update task=drain_it`]);
    const look = async (at: number) => ((now = at), (await executor.poll([{ invocation: task, execution, startedAt: 0 }])).get(task.op)?.outcome);
    state.flags = ['DRAIN'];
    expect(await look(10)).toBeUndefined();
    expect(await look(100_000)).toEqual({ result: 'timeout', detail: 'not done within 100 s' });
    state.base = 'IDLE';
    expect(await look(20)).toEqual({ result: 'ok' });
  });

  it('a resume is done once the drain is lifted; a reboot boots the node through its own session, named after the task', async () => {
    const { calls, state, sessions, site } = fakeSite({ base: 'IDLE', flags: ['DRAIN'] });
    const executor = new SiteTaskExecutor({ site, clock });
    const resume = invocation('n1', 'resume_it', 'resume', {});
    const reboot = invocation('n1', 'reboot_it', 'reboot', { template: 'cos-2.4' });
    const started = await executor.start([resume, reboot]);
    const session = bootSessionName(reboot);
    expect(calls).toEqual([`resume n1 rollout-task ${RUN_ID} task=resume_it`, `boot ${session} cos-2.4 n1`]);
    expect(taskOfBootSession(session)).toBe('reboot_it');
    expect(session).toMatch(/^t-0a1b2c3d-[a-z2-7]+-[0-9a-f]{8}$/);
    const look = async () => executor.poll([resume, reboot].map((i) => ({ invocation: i, execution: started.get(i.op)!, startedAt: 0 })));
    expect((await look()).size).toBe(0);
    state.flags = [];
    sessions.get(session)!.nodes.n1 = 'succeeded';
    expect(Object.fromEntries([...(await look())].map(([op, seen]) => [op, seen.outcome]))).toEqual({
      'n1/resume_it': { result: 'ok' },
      'n1/reboot_it': { result: 'ok' },
    });
  });

  it('a resume is not done while the node does not answer (slurmd never registered after its reboot: IDLE*, then DOWN*): it times out', async () => {
    const { state, site } = fakeSite({ base: 'IDLE', flags: ['DRAIN'] });
    const executor = new SiteTaskExecutor({ site, clock });
    const resume = invocation('n1', 'resume_it', 'resume', {}, 100);
    const execution = (await executor.start([resume])).get(resume.op)!;
    const look = async (at: number) => ((now = at), (await executor.poll([{ invocation: resume, execution, startedAt: 0 }])).get(resume.op)?.outcome);
    state.flags = ['NOT_RESPONDING'];
    expect(await look(10)).toBeUndefined();
    state.base = 'DOWN';
    expect(await look(20)).toBeUndefined();
    expect(await look(100_000)).toEqual({ result: 'timeout', detail: 'not done within 100 s' });
    state.base = 'IDLE';
    state.flags = [];
    expect(await look(30)).toEqual({ result: 'ok' });
  });

  it.each(['bad DIMM slot 3', 'rolling-upgrade maintenance by bob', 'rollout-task check later'])(
    "an admin's drain ('%s') is kept: the drain task sends no drain over it, the resume does not lift it, and is done once the node answers",
    async (reason) => {
      const { calls, state, site } = fakeSite({ base: 'IDLE', flags: ['DRAIN'], reason });
      const executor = new SiteTaskExecutor({ site, clock });
      const drain = invocation('n1', 'drain_it', 'drain', { reason: 'kernel update' }, 100);
      const resume = invocation('n1', 'resume_it', 'resume', {}, 100);
      const started = await executor.start([drain, resume]);
      expect(calls).toEqual([]);
      const look = async (at: number) => {
        now = at;
        const seen = await executor.poll([drain, resume].map((i) => ({ invocation: i, execution: started.get(i.op)!, startedAt: 0 })));
        return Object.fromEntries([...seen].map(([op, s]) => [op, s.outcome]));
      };
      state.flags = ['DRAIN', 'NOT_RESPONDING'];
      expect(await look(10)).toEqual({ 'n1/drain_it': { result: 'ok' } });
      state.flags = ['DRAIN'];
      expect(await look(20)).toEqual({ 'n1/drain_it': { result: 'ok' }, 'n1/resume_it': { result: 'ok' } });
      expect(calls).toEqual([]);
      expect(state.reason).toBe(reason);
    },
  );

  it('a reboot without a template, or a drain whose reason could reach a shell, is refused before the site is touched', async () => {
    const { calls, site } = fakeSite({});
    const executor = new SiteTaskExecutor({ site, clock });
    await expect(executor.start([invocation('n1', 'r', 'reboot', {})])).rejects.toThrow('parameters.template (the boot template) is missing');
    await expect(executor.start([invocation('n1', 'd', 'drain', { reason: 'x; rm -rf /' })])).rejects.toThrow('is not a valid reason');
    expect(calls).toEqual([]);
  });
});
