import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LocalTransport } from '../../../../adapters/site/commands/local-transport';
import { ScontrolWorkloadManager } from '../../../../adapters/site/commands/scontrol-workload-manager';
import { shellCommand } from '../../../../adapters/site/commands/shell-quote';

describe('LocalTransport with a fake scontrol on PATH', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fake-scontrol-'));
  symlinkSync(resolve('test/support/fake-scontrol.sh'), join(dir, 'scontrol'));
  symlinkSync(resolve('test/support/fake-scontrol.sh'), join(dir, 'sinfo'));
  const log = join(dir, 'argv.log');
  const transport = new LocalTransport({ env: { PATH: `${dir}:/usr/bin:/bin`, FAKE_SCONTROL_LOG: log } });
  const calls = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\0').slice(0, -1));

  it('delivers every argument intact, whatever quotes, dollars or spaces it holds', async () => {
    const hostile = ["it's", '$(id)', '`id`', 'a b', '"q"', '\\', '*', 'x; rm -rf /'];
    const result = await transport.run(shellCommand(['scontrol', ...hostile]));
    expect(result.exitCode).toBe(0);
    expect(calls().at(-1)).toEqual(hostile);
  });

  it('drives the scontrol connector: one update per hostlist, the compact listing and then the JSON parsed', async () => {
    const wlm = new ScontrolWorkloadManager({ transport });
    await wlm.update(['n1', 'n2', 'n3'], 'DRAIN', 'rolling-upgrade');
    expect(calls().at(-1)).toEqual(['update', 'NodeName=n[1-3]', 'State=DRAIN', 'Reason=rolling-upgrade']);
    const nodes = await wlm.getNodes(['n1'], { bootedSince: new Map([['n1', 0]]) });
    expect(nodes.get('n1')).toEqual({ name: 'n1', base: 'IDLE', flags: ['DRAIN'], reason: "it's $(id)", bootTime: 1767225600000 });
    expect(calls().slice(-3)).toEqual([
      ['-h', '-N', '-n', 'n1', '-O', 'NodeList:0|,StateComplete:0|,Reason:0'],
      ['--version'],
      ['--json', 'show', 'node', 'n1'],
    ]);
  });

  it('returns a non-zero exit as a result', async () => {
    expect(await transport.run('exit 3')).toMatchObject({ exitCode: 3 });
  });

  it('answers the same for a finished command polled again, and finds a started command by its tag', async () => {
    const since = Date.now();
    const id = await transport.start('echo done', { tag: 'rollout-action a1' });
    expect(await transport.findStarted('rollout-action a1', since)).toBe(id);
    expect(await transport.findStarted('rollout-action a2', since)).toBeUndefined();
    let result;
    while (!(result = await transport.poll(id))) await new Promise((r) => setTimeout(r, 10));
    // A caller that failed to store the result polls again: the same answer, not "unknown command".
    expect(await transport.poll(id)).toEqual(result);
    expect(result).toMatchObject({ exitCode: 0, stdout: 'done\n' });
  });
});
