import { CommandProvisioner, nodeOutcomes, type CommandAction } from '../../../../adapters/site/commands/command-provisioner';
import { LocalTransport } from '../../../../adapters/site/commands/local-transport';
import { compressHostlist } from '../../../../core/site/hostlist';
import { nodeNames, nodesOf, pollUntil } from '../../../support/simulator';
import { memoryConnectorState } from '../../../support/connector-state';
import { startSsmTestSite, type SsmTestSite } from '../../../support/ssm-site';

const names = nodeNames(4);

const result = (exitCode: number, stdout = '') => ({ exitCode, stdout, stderr: '', stdoutTruncated: false });

describe('command provisioner', () => {
  it('reads node=<name> ok|failed lines (names or hostlists); unnamed nodes take the exit code', () => {
    const nodes = ['n1', 'n2', 'n3', 'n4'];
    expect(nodeOutcomes(nodes, result(1, 'node=n[1-2] ok\nnoise\nnode=n3 failed\nnode=other ok\n'))).toEqual({
      n1: 'succeeded',
      n2: 'succeeded',
      n3: 'failed',
      n4: 'failed',
    });
    expect(nodeOutcomes(nodes, result(0, 'node=n3 failed\n'))).toEqual({ n1: 'succeeded', n2: 'succeeded', n3: 'failed', n4: 'succeeded' });
  });

  it('fails the nodes output cut short by the transport does not name, whatever the exit code', () => {
    const nodes = ['n1', 'n2', 'n3'];
    const cut = { exitCode: 0, stdout: 'node=n1 ok\nnode=n2 fail', stderr: '', stdoutTruncated: true };
    expect(nodeOutcomes(nodes, cut)).toEqual({ n1: 'succeeded', n2: 'failed', n3: 'failed' });
  });

  it('starts the command without waiting, with the nodes as one quoted hostlist, and reports it once it ends (local transport)', async () => {
    const provisioner = new CommandProvisioner({
      transport: new LocalTransport(),
      actions: memoryConnectorState().records('command-provisioner'),
      // {nodes} arrives as one quoted word: the script sees the hostlist as $1.
      commands: { prepare: 'sh -c \'sleep 0.2; test "$1" = "n[1-2]" && echo node=n2 failed\' sh {nodes}', deploy: 'true {nodes}' },
    });
    const started = await provisioner.startAction({ name: 'a1', action: 'prepare', nodes: ['n1', 'n2'] });
    expect(started).toEqual({ name: 'a1', action: 'prepare', status: 'running', nodes: { n1: 'running', n2: 'running' } });
    const done = await pollUntil(async () => {
      const status = await provisioner.getAction('a1');
      return status?.status === 'complete' ? status : undefined;
    });
    expect(done.nodes).toEqual({ n1: 'succeeded', n2: 'failed' });
    // The same name again is the same action: nothing runs twice.
    expect(await provisioner.startAction({ name: 'a1', action: 'prepare', nodes: ['n1', 'n2'] })).toEqual(done);
    expect(await provisioner.getAction('nope')).toBeUndefined();
  });

  it('refuses a hostile node name before anything runs', async () => {
    const provisioner = new CommandProvisioner({
      transport: new LocalTransport(),
      commands: { prepare: 'touch /tmp/should-not-exist-{nodes}', deploy: 'true' },
      actions: memoryConnectorState().records('command-provisioner'),
    });
    await expect(provisioner.startAction({ name: 'a', action: 'prepare', nodes: ['n1; reboot'] })).rejects.toThrow(/not a valid node name/);
  });
});

/** The action once complete (SSM reports a command in progress at the first look). */
async function finished(provisioner: CommandProvisioner, name: string) {
  for (let look = 0; look < 3; look++) {
    const status = await provisioner.getAction(name);
    if (status?.status === 'complete') return status;
  }
  throw new Error(`action ${name} did not complete`);
}

describe('command provisioner over SSM: one command per action, whatever is retried', () => {
  let t: SsmTestSite;
  afterEach(() => t.close());

  const provisionLines = () => t.site.simulator.headNode.commandLog.filter((c) => c.startsWith('provision'));
  const build = (records = memoryConnectorState().records<CommandAction>('command-provisioner')) =>
    new CommandProvisioner({
      transport: t.transport,
      commands: { prepare: 'provision prepare {nodes}', deploy: 'provision deploy {nodes}' },
      actions: records,
      clock: { now: () => t.site.simulator.clock.now() },
    });

  it('records a start that failed and starts the command on the retry', async () => {
    // The SDK retries a 500 itself (3 attempts): four in a row fail the first start.
    t = await startSsmTestSite({
      nodes: nodesOf(names),
      timing: { deploySeconds: 60 },
      apiFaults: [{ service: 'ssm', method: 'POST', path: 'SendCommand', status: 500, count: 4 }],
    });
    const records = memoryConnectorState().records<CommandAction>('command-provisioner');
    const provisioner = build(records);
    await expect(provisioner.startAction({ name: 'a1', action: 'deploy', nodes: names })).rejects.toThrow(/SendCommand/);
    expect(await records.get('a1')).toMatchObject({ nodes: names, error: expect.stringMatching(/InternalServerError/) });
    expect(await provisioner.getAction('a1')).toMatchObject({ status: 'running' });

    await provisioner.startAction({ name: 'a1', action: 'deploy', nodes: names });
    expect((await records.get('a1'))!.error).toBeUndefined();
    t.advance(60);
    const done = await finished(provisioner, 'a1');
    expect(Object.values(done.nodes)).toEqual(names.map(() => 'succeeded'));
    expect(provisionLines()).toHaveLength(1);
  });

  it('adopts the command an earlier attempt started but did not record (found by its Comment through ListCommandInvocations)', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names), timing: { prepareSeconds: 60 } });
    const records = memoryConnectorState().records<CommandAction>('command-provisioner');
    const now = t.site.simulator.clock.now();
    // As if a process wrote the record, sent the command, and stopped before writing its id.
    await records.create({ name: 'a1', action: 'prepare', nodes: names, startedAt: now });
    const sentBefore = await t.transport.start(`provision prepare '${compressHostlist(names)}'`, { tag: 'rollout-action a1', timeoutSeconds: 3600 });
    await t.transport.start("provision prepare 'x3000c0s1b0n0'", { tag: 'rollout-action another' });
    t.advance(60);

    const provisioner = build(records);
    await provisioner.startAction({ name: 'a1', action: 'prepare', nodes: names });
    expect((await records.get('a1'))!.invocationId).toBe(sentBefore);
    expect(t.transport.stats.listCommandInvocations).toBe(1);
    expect((await finished(provisioner, 'a1')).nodes).toEqual(Object.fromEntries(names.map((n) => [n, 'succeeded'])));
    expect(provisionLines()).toHaveLength(2);
  });

  it('waits for a start still on its way rather than starting a second command', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names) });
    const records = memoryConnectorState().records<CommandAction>('command-provisioner');
    await records.create({ name: 'a1', action: 'prepare', nodes: names, startedAt: t.site.simulator.clock.now() });
    const provisioner = build(records);
    expect(await provisioner.startAction({ name: 'a1', action: 'prepare', nodes: names })).toMatchObject({ status: 'running' });
    expect(provisionLines()).toEqual([]);
    // Past the grace period with no command found, the start is retried.
    t.advance(600);
    await provisioner.startAction({ name: 'a1', action: 'prepare', nodes: names });
    expect(provisionLines()).toHaveLength(1);
  });

  it('fails every node of a command SSM reports TimedOut', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names), commandFaults: [{ match: 'provision', hang: true }] });
    const provisioner = new CommandProvisioner({
      transport: t.transport,
      commands: { prepare: 'provision prepare {nodes}', deploy: 'provision deploy {nodes}' },
      actions: memoryConnectorState().records('command-provisioner'),
      timeoutSeconds: 60,
    });
    await provisioner.startAction({ name: 'a1', action: 'deploy', nodes: names });
    t.advance(120);
    expect((await finished(provisioner, 'a1')).nodes).toEqual(Object.fromEntries(names.map((n) => [n, 'failed'])));
  });
});
