import { compressHostlist } from '../../../../core/site/hostlist';
import { SLURM_COMMAND_TIMEOUT_SECONDS, ScontrolWorkloadManager } from '../../../../adapters/site/commands/scontrol-workload-manager';
import { SlurmRebootBootService, type SlurmRebootSession } from '../../../../adapters/site/commands/slurm-reboot-boot-service';
import { CommandTransportError } from '../../../../ports/command-transport';
import { createSiteFromProfile } from '../../../../adapters/site';
import { EmptyBootSessionError, SiteServiceError } from '../../../../core/errors';
import { parseSiteProfile } from '../../../../core/site/site-profile';
import { HEAD_NODE_INSTANCE_ID } from '../../../../simulator/models/head-node';
import { nodeNames, nodesOf } from '../../../support/simulator';
import { memoryConnectorState } from '../../../support/connector-state';
import { startSsmTestSite, type SsmTestSite } from '../../../support/ssm-site';

const names = nodeNames(6);
const sessions = () => memoryConnectorState().records<SlurmRebootSession>('slurm-reboot');
const clock = (t: SsmTestSite) => ({ now: () => t.site.simulator.clock.now() });

describe('scontrol over SSM on the simulated head node', () => {
  let t: SsmTestSite;
  afterEach(() => t.close());

  it('reads, drains, fails and resumes nodes with hostlists, through the real SSM client', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names), groups: { compute: names } });
    const wlm = new ScontrolWorkloadManager({ transport: t.transport });
    await wlm.update(names.slice(0, 3), 'DRAIN', 'rolling-upgrade');
    await wlm.fail(names[3]!, 'upgrading-boot-session-failed');
    const nodes = await wlm.getNodes([...names, 'x9999c0s1b0n0']);
    expect(nodes.size).toBe(6);
    expect(nodes.get(names[0]!)).toEqual({ name: names[0], base: 'IDLE', flags: ['DRAIN'], reason: 'rolling-upgrade', bootTime: undefined });
    // State=FAIL sets FAIL alone, as Slurm does (node_mgr.c update_node clears DRAIN).
    expect(nodes.get(names[3]!)).toMatchObject({ flags: ['FAIL'], reason: 'upgrading-boot-session-failed' });
    await wlm.resume(names[0]!);
    expect((await wlm.getNodes([names[0]!])).get(names[0]!)).toMatchObject({ flags: [] });
    expect(t.site.simulator.headNode.commandLog[0]).toBe(
      "scontrol 'update' 'NodeName=x3000c0s[1-3]b0n0' 'State=DRAIN' 'Reason=rolling-upgrade'".replace("scontrol '", "'scontrol' '"),
    );
    expect(t.transport.stats.sendCommand).toBe(t.site.simulator.headNode.commandLog.length);
  });

  it('reads when the running jobs end from squeue (time left, from the site clock); idle nodes are absent', async () => {
    t = await startSsmTestSite({
      nodes: nodesOf(names).map((n, i) =>
        i === 0 ? { ...n, wlm: { state: 'ALLOCATED' as const, busySeconds: 90_061 } } : i === 1 ? { ...n, wlm: { state: 'MIXED' as const } } : n,
      ),
      groups: { compute: names },
    });
    const wlm = new ScontrolWorkloadManager({ transport: t.transport, clock: clock(t) });
    const now = t.site.simulator.clock.now();
    const ends = await wlm.getJobEnds(names);
    expect([...ends.keys()].sort()).toEqual([names[0], names[1]].sort());
    // 1-01:01:01 left: a second's rounding at most.
    expect(Math.abs(ends.get(names[0]!)! - (now + 90_061_000))).toBeLessThanOrEqual(1000);
    expect(ends.get(names[1]!)).toBe(Infinity);
    expect(t.site.simulator.headNode.commandLog.at(-1)).toBe("'squeue' '-h' '-t' 'RUNNING' '-w' 'x3000c0s[1-6]b0n0' '-o' '%N %L'");
  });

  it('drains, fails and resumes a list of nodes with one command each', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names) });
    const wlm = new ScontrolWorkloadManager({ transport: t.transport });
    await wlm.drainNodes(names, 'rolling-upgrade');
    await wlm.failNodes([names[0]!, names[2]!], 'upgrading-boot-session-failed');
    await wlm.resumeNodes(names.slice(3));
    expect(t.site.simulator.headNode.commandLog).toEqual([
      "'scontrol' 'update' 'NodeName=x3000c0s[1-6]b0n0' 'State=DRAIN' 'Reason=rolling-upgrade'",
      "'scontrol' 'update' 'NodeName=x3000c0s[1,3]b0n0' 'State=FAIL' 'Reason=upgrading-boot-session-failed'",
      "'scontrol' 'update' 'NodeName=x3000c0s[4-6]b0n0' 'State=RESUME'",
    ]);
    expect(names.map((n) => t.state().nodes[n]!.wlmState)).toEqual(['FAIL', 'DRAINED', 'FAIL', 'IDLE', 'IDLE', 'IDLE']);
  });

  it("reads 60 nodes with one compact listing, and the detail of nodes judged by their boot in chunks sized to what fits SSM's output", async () => {
    const many = nodeNames(60);
    t = await startSsmTestSite({ nodes: nodesOf(many) });
    const wlm = new ScontrolWorkloadManager({ transport: t.transport });
    expect((await wlm.getNodes(many)).size).toBe(60);
    expect(t.site.simulator.headNode.commandLog).toHaveLength(1);
    expect(t.site.simulator.headNode.commandLog[0]).toMatch(/^'?sinfo'? /);
    const judged = { bootedSince: new Map(many.map((n) => [n, Date.now() + 3_600_000])) };
    t.advance(1);
    expect((await wlm.getNodes(many, judged)).size).toBe(60);
    const first = t.site.simulator.headNode.commandLog.length;
    // The simulator prints nodes as Slurm 24 does (~2.6 KB each, pretty): 6 per call at first, then as many as
    // fit 20,000 characters, 7 or 8; with the listing and `scontrol --version` before them.
    expect(first).toBeGreaterThanOrEqual(9);
    expect(first).toBeLessThanOrEqual(12);
    t.advance(1);
    expect((await wlm.getNodes(many, judged)).size).toBe(60);
    expect(t.site.simulator.headNode.commandLog.length - first).toBeLessThanOrEqual(1 + Math.ceil(60 / 7));
    // Never cut short: every answer was whole.
    expect(t.transport.stats.outputBytes / t.transport.stats.sendCommand).toBeLessThan(24_000);
  });

  it('asks again in smaller chunks when the output passes the 24,000 characters SSM keeps', async () => {
    const many = nodeNames(400);
    t = await startSsmTestSite({ nodes: nodesOf(many) });
    const wlm = new ScontrolWorkloadManager({ transport: t.transport, showChunk: 400 });
    const nodes = await wlm.getNodes(many, { bootedSince: new Map(many.map((n) => [n, Date.now() + 3_600_000])) });
    expect(nodes.size).toBe(400);
    expect(t.site.simulator.headNode.commandLog.filter((c) => c.includes('show')).length).toBeGreaterThan(1);
  });

  it('turns a failing command into a SiteServiceError with its stderr', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names), commandFaults: [{ match: 'State=DRAIN', exitCode: 1, stderr: 'slurm_update error: Access denied' }] });
    const wlm = new ScontrolWorkloadManager({ transport: t.transport });
    await expect(wlm.drain(names[0]!, 'rolling-upgrade')).rejects.toThrow(/Access denied/);
    await expect(wlm.drain(names[0]!, 'rolling-upgrade')).resolves.toBeUndefined();
  });

  it('reports a command that never finishes as SSM TimedOut, carrying the command id', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names), commandFaults: [{ match: 'show node', hang: true }] }, { pollSeconds: 120 });
    const err = await t.transport.run("scontrol --json show node 'x3000c0s1b0n0'", { timeoutSeconds: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandTransportError);
    expect((err as CommandTransportError).details).toMatchObject({ transport: 'ssm', status: 'TimedOut', instanceId: HEAD_NODE_INSTANCE_ID });
    expect((err as CommandTransportError).details.commandId).toMatch(/^\d{8}-/);
  });

  it("ends a Slurm command that never finishes at 60 s of the site's clock and says so, not at the transport's default of 600 s", async () => {
    // The read's first command is the compact sinfo listing (the scontrol detail read follows only for some nodes): it is the one that hangs.
    t = await startSsmTestSite({ nodes: nodesOf(names), commandFaults: [{ match: "'sinfo' '-h' '-N'", hang: true }] }, { pollSeconds: 10 });
    const wlm = new ScontrolWorkloadManager({ transport: t.transport });
    const startedAt = t.site.simulator.clock.now();
    const err = await wlm.getNodes([names[0]!]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteServiceError);
    expect((err as SiteServiceError).message).toMatch(/'sinfo' '-h' '-N' '-n' .*: SSM command .* ended TimedOut/);
    const waited = (t.site.simulator.clock.now() - startedAt) / 1000;
    expect(waited).toBeGreaterThanOrEqual(SLURM_COMMAND_TIMEOUT_SECONDS);
    expect(waited).toBeLessThan(SLURM_COMMAND_TIMEOUT_SECONDS + 30);
  });

  it('runs NHC on a compute node over ssh: it passes, fails with its ERROR line, or never returns (a poll then reports TimedOut)', async () => {
    const faults = (i: number) => (i === 1 ? { faults: { healthCheck: 'fail' as const } } : i === 2 ? { faults: { healthCheck: 'hang' as const } } : {});
    t = await startSsmTestSite({ nodes: nodesOf(names).map((n, i) => ({ ...n, ...faults(i) })) });
    expect(await t.transport.run(`ssh ${names[0]} /usr/sbin/nhc`)).toMatchObject({ exitCode: 0 });
    expect(await t.transport.run(`ssh -o BatchMode=yes ${names[1]} nhc`)).toMatchObject({
      exitCode: 1,
      stdout: expect.stringContaining('ERROR:  nhc:  Health check failed'),
    });
    expect(await t.transport.run('ssh x9999c0s1b0n0 nhc')).toMatchObject({ exitCode: 255, stderr: expect.stringContaining('Could not resolve hostname') });
    expect(await t.transport.run(`ssh ${names[0]} reboot`)).toMatchObject({ exitCode: 127 });
    const id = await t.transport.start(`ssh ${names[2]} nhc`, { timeoutSeconds: 60 });
    expect(await t.transport.poll(id)).toBeUndefined();
    t.advance(61);
    const err = await t.transport.poll(id).catch((e: unknown) => e);
    // The command's own TimedOut, with its status: not a failed poll.
    expect((err as CommandTransportError).details).toMatchObject({ transport: 'ssm', status: 'TimedOut' });
    expect(t.state().nodes[names[2]!]!.healthCheckCount).toBe(1);
  });

  it.each([
    ['SendCommand', () => t.transport.start('true', { timeoutSeconds: 60 }), 'SendCommand to i-'],
    ['GetCommandInvocation', async () => t.transport.poll(await t.transport.start('true')), 'GetCommandInvocation '],
    ['ListCommandInvocations', () => t.transport.findStarted('a-tag', 0), 'ListCommandInvocations'],
  ])('gives %s up when the SSM endpoint never answers, saying which call timed out after how long', async (operation, call, named) => {
    t = await startSsmTestSite({ nodes: nodesOf(names), apiFaults: [{ service: 'ssm', path: operation, hang: true, count: 5 }] }, { requestTimeoutMs: 300 });
    const outcome = await Promise.race([
      call().then(
        () => 'answered',
        (e: unknown) => e,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5000)),
    ]);
    expect(outcome).toBeInstanceOf(CommandTransportError);
    expect((outcome as CommandTransportError).message).toMatch(new RegExp(`^SSM ${named}.*timed out after 300 ms: the SSM endpoint did not answer$`));
    expect((outcome as CommandTransportError).details).toMatchObject({ transport: 'ssm', timedOut: true });
  });

  it('retries throttling, and falls back to the next instance when SSM refuses the first', async () => {
    t = await startSsmTestSite(
      { nodes: nodesOf(names), apiFaults: [{ service: 'ssm', path: 'GetCommandInvocation', status: 400, count: 4 }] },
      { instanceIds: ['i-0aaaaaaaaaaaaaaaa', HEAD_NODE_INSTANCE_ID] },
    );
    const result = await t.transport.run("scontrol --json show node 'x3000c0s1b0n0'");
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).nodes[0].name).toBe(names[0]);
  });

  it('answers an unknown or shell-expanding command with exit 127', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names) });
    expect(await t.transport.run('rm -rf /')).toMatchObject({ exitCode: 127, stderr: expect.stringContaining('command not found') });
    expect(await t.transport.run('scontrol show node $(id)')).toMatchObject({ exitCode: 127, stderr: expect.stringContaining('unsupported shell syntax') });
  });
});

describe('slurm-reboot boot sessions over SSM', () => {
  let t: SsmTestSite;
  afterEach(() => t.close());

  it('selects the image, reboots with scontrol and reports each node from Slurm', async () => {
    t = await startSsmTestSite({
      nodes: nodesOf(names, (_, i) => (i === 1 ? { faults: { boot: 'fail' } } : i === 2 ? { wlm: { state: 'DRAINED', reason: 'bad dimm' } } : {})),
      groups: { upgrading: names.slice(0, 3) },
      timing: { bootSeconds: 300, returnSeconds: 60 },
      // The failing node is set DOWN at ResumeTimeout, inside the 360 s this test waits.
      slurm: { resumeTimeoutSeconds: 300 },
    });
    const boot = new SlurmRebootBootService({
      transport: t.transport,
      inventory: fakeInventory({ upgrading: names.slice(0, 3) }),
      prepareCommand: 'wwctl node set --yes --image {template} {nodes}',
      clock: clock(t),
      sessions: sessions(),
    });
    const request = { name: 'rollout-u1-step-0', operation: 'reboot' as const, templateName: 'rocky-9.4', limit: { label: 'upgrading' } };
    const started = await boot.createSession(request);
    expect(started).toEqual({ name: request.name, status: 'running', nodes: { [names[0]!]: 'booting', [names[1]!]: 'booting', [names[2]!]: 'booting' } });
    expect(t.site.simulator.headNode.images.get(names[2]!)).toBe('rocky-9.4');
    // A retry of the same request reboots nothing twice.
    await boot.createSession(request);
    expect(t.state().nodes[names[0]!]!.bootCount).toBe(1);

    t.advance(360);
    const done = await boot.getSession(request.name);
    expect(done).toEqual({ name: request.name, status: 'complete', nodes: { [names[0]!]: 'succeeded', [names[1]!]: 'failed', [names[2]!]: 'succeeded' } });
    // No nextstate: every node keeps its state and drain through the reboot, and Slurm appends to the reason;
    // the admin's drain on the third node stays (the run gives its reason back once it judged the node).
    expect(t.state().nodes[names[0]!]).toMatchObject({ wlmState: 'IDLE' });
    // (its reboot outlasted ResumeTimeout here too, so Slurm appended that as well before it registered)
    expect(t.state().nodes[names[2]!]).toMatchObject({ wlmState: 'DRAINED' });
    expect(t.state().nodes[names[2]!]!.wlmReason).toMatch(/^bad dimm : reboot issued/);
    // ResumeTimeout appends to the reason (node_mgr.c check_reboot_nodes).
    expect(t.state().nodes[names[1]!]!.wlmReason).toMatch(/ : reboot issued : reboot timed out$/);
    expect(t.site.simulator.headNode.commandLog.filter((c) => c.includes('reboot'))).toEqual([`'scontrol' 'reboot' '${compressHostlist(names.slice(0, 3))}'`]);
  });

  it('reboots the one node of a one-node limit (a list, never read as a group label)', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names), timing: { bootSeconds: 60, returnSeconds: 10 } });
    const looked: string[] = [];
    const inventory = { ...fakeInventory({}), getGroupMembers: async (label: string) => (looked.push(label), []) };
    const boot = new SlurmRebootBootService({ transport: t.transport, inventory, clock: clock(t), sessions: sessions() });
    const started = await boot.createSession({ name: 'rollout-u1-boot-0', operation: 'reboot', templateName: 'img', limit: { nodes: [names[1]!] } });
    expect(started.nodes).toEqual({ [names[1]!]: 'booting' });
    expect(looked).toEqual([]);
    // The reboot just sent is the answer (booting): no node read, which would cost slurmctld 2 RPCs to say so.
    expect(t.site.simulator.headNode.commandLog).toEqual([`'scontrol' 'reboot' '${names[1]}'`]);
    t.advance(70);
    expect(await boot.getSession('rollout-u1-boot-0')).toEqual({ name: 'rollout-u1-boot-0', status: 'complete', nodes: { [names[1]!]: 'succeeded' } });
    expect(names.map((n) => t.state().nodes[n]!.bootCount)).toEqual([0, 1, 0, 0, 0, 0]);
  });

  it('refuses a session that would reboot no node (an empty list, a group with no members) before any command or record', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names) });
    const records = sessions();
    const boot = new SlurmRebootBootService({ transport: t.transport, inventory: fakeInventory({ upgrading: [] }), clock: clock(t), sessions: records });
    for (const [limit, why] of [
      [{ label: 'upgrading' }, /boot session s would reboot no node: group 'upgrading' has no members in the inventory; nothing was booted/],
      [{ nodes: [] }, /boot session s would reboot no node: its limit lists no node/],
    ] as const) {
      const err = await boot.createSession({ name: 's', operation: 'reboot', templateName: 'img', limit }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmptyBootSessionError);
      expect(err).toMatchObject({ name: 'EmptyBootSessionError', service: 'boot-service', session: 's', message: expect.stringMatching(why) });
    }
    expect(await records.get('s')).toBeUndefined();
    expect(t.site.simulator.headNode.commandLog).toEqual([]);
  });

  it('rejects a hostile template before any command runs', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names), groups: { upgrading: names } });
    const boot = new SlurmRebootBootService({
      transport: t.transport,
      inventory: fakeInventory({ upgrading: names }),
      prepareCommand: 'nodeset {nodes} osimage={template}',
      sessions: sessions(),
    });
    await expect(boot.createSession({ name: 's', operation: 'reboot', templateName: 'img; reboot -f', limit: { label: 'upgrading' } })).rejects.toThrow(
      /templateName: "img; reboot -f" is not a valid boot template/,
    );
    expect(t.site.simulator.headNode.commandLog).toEqual([]);
  });

  it('surfaces a failing prepare command as a retryable SiteServiceError, and the retry prepares and reboots', async () => {
    t = await startSsmTestSite({
      nodes: nodesOf(names),
      commandFaults: [{ match: 'nodeset', exitCode: 2, stderr: 'osimage not found' }],
      timing: { bootSeconds: 60, returnSeconds: 10 },
    });
    const records = sessions();
    const boot = new SlurmRebootBootService({
      transport: t.transport,
      inventory: fakeInventory({}),
      prepareCommand: 'nodeset {nodes} osimage={template}',
      clock: clock(t),
      sessions: records,
    });
    const request = { name: 's', operation: 'reboot' as const, templateName: 'img', limit: { nodes: names.slice(0, 2) } };
    const err = await boot.createSession(request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteServiceError);
    expect((err as Error).message).toMatch(/osimage not found/);
    expect(await records.get('s')).toMatchObject({ prepared: false, rebooted: false, attempts: 1, error: expect.stringMatching(/osimage not found/) });
    // Nothing was rebooted; a read says the nodes wait for their reboot, and that its start failed (the run asks again).
    expect(await boot.getSession('s')).toEqual({
      name: 's',
      status: 'running',
      startError: expect.stringMatching(/osimage not found.*\(attempt 1 of 3\)/),
      nodes: { [names[0]!]: 'pending', [names[1]!]: 'pending' },
    });

    await boot.createSession(request);
    expect(t.site.simulator.headNode.images.get(names[0]!)).toBe('img');
    t.advance(70);
    expect(await boot.getSession('s')).toEqual({ name: 's', status: 'complete', nodes: { [names[0]!]: 'succeeded', [names[1]!]: 'succeeded' } });
    expect([t.state().nodes[names[0]!]!.bootCount, t.state().nodes[names[1]!]!.bootCount]).toEqual([1, 1]);
    // Done: another retry runs no command.
    const sent = t.site.simulator.headNode.commandLog.length;
    await boot.createSession(request);
    expect(t.site.simulator.headNode.commandLog.slice(sent).every((c) => c.includes("'show'"))).toBe(true);
  });

  it('re-sends a failed reboot command, without preparing again', async () => {
    t = await startSsmTestSite({
      nodes: nodesOf(names),
      commandFaults: [{ match: "'reboot'", exitCode: 1, stderr: 'slurm_reboot_nodes error: Unable to contact slurm controller' }],
      timing: { bootSeconds: 60, returnSeconds: 10 },
    });
    const boot = new SlurmRebootBootService({
      transport: t.transport,
      inventory: fakeInventory({ upgrading: names.slice(0, 2) }),
      prepareCommand: 'nodeset {nodes} osimage={template}',
      clock: clock(t),
      sessions: sessions(),
    });
    const request = { name: 's', operation: 'reboot' as const, templateName: 'img', limit: { label: 'upgrading' } };
    await expect(boot.createSession(request)).rejects.toThrow(/Unable to contact slurm controller/);
    await boot.createSession(request);
    t.advance(70);
    expect((await boot.getSession('s'))!.status).toBe('complete');
    const log = t.site.simulator.headNode.commandLog;
    expect(log.filter((c) => c.startsWith('nodeset'))).toHaveLength(1);
    expect(log.filter((c) => c.includes("'reboot'"))).toHaveLength(2);
    expect(t.state().nodes[names[0]!]!.bootCount).toBe(1);
  });

  it('on a retry after a reboot reached slurmctld, reboots only the nodes that have none pending or done', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names), timing: { bootSeconds: 60, returnSeconds: 10 } });
    const records = sessions();
    const boot = new SlurmRebootBootService({ transport: t.transport, inventory: fakeInventory({}), clock: clock(t), sessions: records });
    const request = { name: 's', operation: 'reboot' as const, templateName: 'img', limit: { nodes: names.slice(0, 3) } };
    await boot.createSession(request);
    t.advance(70);
    // As if the process died after `scontrol reboot` ran but before it recorded so, and a third node was left out of it.
    const stored = (await records.get('s'))!;
    await records.update({ ...stored, nodes: names.slice(0, 4), rebooted: false, error: 'the process stopped' });
    await boot.createSession({ ...request, limit: { nodes: names.slice(0, 4) } });
    t.advance(70);
    expect((await boot.getSession('s'))!.nodes).toEqual({
      [names[0]!]: 'succeeded',
      [names[1]!]: 'succeeded',
      [names[2]!]: 'succeeded',
      [names[3]!]: 'succeeded',
    });
    expect(names.slice(0, 4).map((n) => t.state().nodes[n]!.bootCount)).toEqual([1, 1, 1, 1]);
    expect(t.site.simulator.headNode.commandLog.filter((c) => c.includes("'reboot'")).at(-1)).toContain(`'${names[3]}'`);
  });

  it("fails the session with the command's own error once its attempts are spent", async () => {
    t = await startSsmTestSite({
      nodes: nodesOf(names),
      commandFaults: [{ match: 'wwctl', exitCode: 255, stderr: 'ERROR: image rocky-9.9 does not exist', count: 10 }],
    });
    const boot = new SlurmRebootBootService({
      transport: t.transport,
      inventory: fakeInventory({}),
      prepareCommand: 'wwctl node set --yes --image {template} {nodes}',
      clock: clock(t),
      sessions: sessions(),
      maxAttempts: 2,
    });
    const request = { name: 's', operation: 'reboot' as const, templateName: 'rocky-9.9', limit: { nodes: [names[0]!] } };
    await expect(boot.createSession(request)).rejects.toThrow(/image rocky-9.9 does not exist/);
    const last = await boot.createSession(request);
    expect(last).toEqual({
      name: 's',
      status: 'complete',
      error: expect.stringMatching(/image rocky-9.9 does not exist.*after 2 attempts/),
      nodes: { [names[0]!]: 'failed' },
    });
    expect(await boot.getSession('s')).toEqual(last);
    expect(t.site.simulator.headNode.commandLog.filter((c) => c.includes('reboot'))).toEqual([]);
    expect(t.state().nodes[names[0]!]!.bootCount).toBe(0);
  });
});

function fakeInventory(groups: Record<string, string[]>) {
  const notFound = (label: string) => Object.assign(new Error(`failed to obtain Node Group named '${label}'`), { name: 'GroupNotFoundError' });
  return {
    getGroupMembers: async (label: string) => {
      if (!groups[label]) throw notFound(label);
      return groups[label];
    },
    addGroupMembers: async () => {},
    removeGroupMembers: async () => {},
    listNodes: async () => [],
  };
}

describe('commandPaths in a profile', () => {
  let t: SsmTestSite;
  afterEach(() => t.close());

  it("built from a profile, the scontrol workload manager counts squeue's time left from the site's clock, not this host's", async () => {
    // The simulated site's clock starts at 2026-01-01, months from the host's: a job end on the host's clock put
    // a window's ETA 7,966 h away (`ETA in 7966h 43m of simulated time` over a `rollout simulate` profile).
    t = await startSsmTestSite({
      nodes: nodesOf(names).map((n, i) => (i === 0 ? { ...n, wlm: { state: 'ALLOCATED' as const, busySeconds: 3_600 } } : n)),
      groups: { compute: names },
    });
    const profile = parseSiteProfile({
      transport: { type: 'ssm', instanceIds: [HEAD_NODE_INSTANCE_ID], region: 'us-east-1', endpoint: t.site.url },
      workloadManager: { type: 'scontrol' },
      bootService: { type: 'slurm-reboot' },
      inventory: { type: 'slurm' },
      simulatedTime: { timeScale: 1, controlUrl: t.site.urls.control },
    });
    const { site } = await createSiteFromProfile(profile, { connectorState: memoryConnectorState(), clock: clock(t) });
    const now = t.site.simulator.clock.now();
    expect(Math.abs(now - Date.now())).toBeGreaterThan(86_400_000);
    const ends = await site.workloadManager.getJobEnds!([names[0]!]);
    expect(Math.abs(ends.get(names[0]!)! - (now + 3_600_000))).toBeLessThanOrEqual(1000);
  });

  it("runs scontrol, sinfo and squeue by the absolute paths the profile gives (SSM's PATH lacks /opt/slurm/bin)", async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names), groups: { compute: names } });
    const profile = parseSiteProfile({
      transport: { type: 'ssm', instanceIds: [HEAD_NODE_INSTANCE_ID], region: 'us-east-1', endpoint: t.site.url },
      workloadManager: { type: 'scontrol' },
      bootService: { type: 'slurm-reboot' },
      inventory: { type: 'slurm' },
      commandPaths: { scontrol: '/opt/slurm/bin/scontrol', sinfo: '/opt/slurm/bin/sinfo', squeue: '/opt/slurm/bin/squeue' },
      simulatedTime: { timeScale: 1, controlUrl: t.site.urls.control },
    });
    const { site } = await createSiteFromProfile(profile, { connectorState: memoryConnectorState(), clock: clock(t) });
    await site.workloadManager.drainNodes(names.slice(0, 2), 'rolling-upgrade');
    await site.workloadManager.getJobEnds!(names.slice(0, 2));
    await site.inventory.addGroupMembers('upgrading', names.slice(0, 2));
    await site.bootService.createSession({ name: 's', operation: 'reboot', templateName: 'img', limit: { label: 'upgrading' } });
    const programs = new Set(t.site.simulator.headNode.commandLog.map((c) => c.split(' ')[0]));
    expect(programs).toEqual(new Set(["'/opt/slurm/bin/scontrol'", "'/opt/slurm/bin/sinfo'", "'/opt/slurm/bin/squeue'"]));
  });
});
