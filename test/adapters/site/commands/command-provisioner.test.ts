import { CommandProvisioner, nodeOutcomes } from '../../../../adapters/site/commands/command-provisioner';
import { LocalTransport } from '../../../../adapters/site/commands/local-transport';
import { pollUntil } from '../../../support/simulator';
import { memoryConnectorState } from '../../../support/connector-state';

const result = (exitCode: number, stdout = '') => ({ exitCode, stdout, stderr: '', stdoutTruncated: false });

describe('command provisioner', () => {
  it('reads node=<name> ok|failed lines (names or hostlists); unnamed nodes take the exit code', () => {
    const nodes = ['n1', 'n2', 'n3', 'n4'];
    expect(nodeOutcomes(nodes, result(1, 'node=n[1-2] ok\nnoise\nnode=n3 failed\nnode=other ok\n'))).toEqual({ n1: 'succeeded', n2: 'succeeded', n3: 'failed', n4: 'failed' });
    expect(nodeOutcomes(nodes, result(0, 'node=n3 failed\n'))).toEqual({ n1: 'succeeded', n2: 'succeeded', n3: 'failed', n4: 'succeeded' });
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
    const provisioner = new CommandProvisioner({ transport: new LocalTransport(), commands: { prepare: 'touch /tmp/should-not-exist-{nodes}', deploy: 'true' }, actions: memoryConnectorState().records('command-provisioner') });
    await expect(provisioner.startAction({ name: 'a', action: 'prepare', nodes: ['n1; reboot'] })).rejects.toThrow(/not a valid node name/);
  });
});
