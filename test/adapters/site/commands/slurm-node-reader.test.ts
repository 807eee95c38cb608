import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SiteServiceError } from '../../../../core/errors';
import { parseCompactLine, parseOneLiner, parseSlurmVersion, SlurmNodeReader } from '../../../../adapters/site/commands/slurm-node-reader';
import type { CommandResult, CommandTransport } from '../../../../ports/command-transport';

const FIXTURES = path.join(__dirname, '..', '..', '..', 'fixtures', 'slurm');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name), 'utf8');

/** A head node answering each command from a table (unit test: the real-Slurm suite runs the real commands). */
class ScriptedHeadNode implements CommandTransport {
  readonly scripts: string[] = [];
  constructor(private readonly answer: (script: string) => Partial<CommandResult>) {}
  async run(script: string): Promise<CommandResult> {
    this.scripts.push(script);
    return { exitCode: 0, stdout: '', stderr: '', stdoutTruncated: false, ...this.answer(script) };
  }
  start(): Promise<string> {
    throw new Error('not used');
  }
  findStarted(): Promise<string | undefined> {
    throw new Error('not used');
  }
  poll(): Promise<CommandResult | undefined> {
    throw new Error('not used');
  }
}

/** A site clock the test moves: a listing is reused only within the same moment (one increment). */
const clock = {
  at: 0,
  now() {
    return this.at;
  },
};
const later = () => (clock.at += 10_000);

const kinds = (scripts: readonly string[]) => scripts.map((s) => (s.includes("'--version'") ? 'version' : s.includes("'sinfo'") ? 'compact' : 'detail'));

describe('the Slurm version, asked once', () => {
  it('reads upstream and Debian version lines', () => {
    expect(parseSlurmVersion('slurm 24.11.7\n')).toMatchObject({ major: 24, minor: 11 });
    expect(parseSlurmVersion('slurm-wlm 22.05.8\n')).toMatchObject({ major: 22, minor: 5 });
    expect(parseSlurmVersion('slurm 25.05.0-0rc1')).toMatchObject({ major: 25, minor: 5 });
    expect(parseSlurmVersion('scontrol: error: resolve_ctls_from_dns_srv')).toBeUndefined();
  });
});

describe('Slurm 22.05: the compact listing, then `scontrol -o show node` for what changed', () => {
  const compact = fixture('sinfo-compact-22.05.8.txt');
  const detail = fixture('scontrol-o-show-node-22.05.8.txt');
  const headNode = (overrides: (script: string) => Partial<CommandResult> | undefined = () => undefined) =>
    new ScriptedHeadNode((script) => {
      const special = overrides(script);
      if (special) return special;
      if (script.includes("'--version'")) return { stdout: 'slurm-wlm 22.05.8\n' };
      if (script.includes("'sinfo'")) return { stdout: compact };
      return { stdout: detail };
    });

  it('parses the real one-liners: state words, the reason up to its [user@time], the boot time as epoch', () => {
    const nodes = detail.split('\n').filter(Boolean).map(parseOneLiner);
    expect(nodes.map((n) => [n?.name, n?.base, n?.flags, n?.reason])).toEqual([
      ['c01', 'IDLE', [], undefined],
      ['c02', 'IDLE', ['DRAIN'], 'rolling-upgrade'],
      ['c03', 'IDLE', ['DRAIN'], 'admin: bad dimm'],
      ['c04', 'IDLE', ['DRAIN'], 'rolling-upgrade'],
    ]);
    expect(nodes.every((n) => typeof n?.bootTime === 'number' && n.bootTime > 1.7e12)).toBe(true);
    expect(
      parseOneLiner('NodeName=x State=DOWN+DRAIN+NOT_RESPONDING BootTime=None Reason=rolling-upgrade : Not responding [slurm@1795722523] Comment=a b'),
    ).toEqual({
      name: 'x',
      base: 'DOWN',
      flags: ['DRAIN', 'NOT_RESPONDING'],
      reason: 'rolling-upgrade : Not responding',
    });
  });

  it('parses compact lines: lowercase state words, none as no reason, a reason with any character', () => {
    expect(parseCompactLine('c03|idle+drain+completing|bad | dimm')).toEqual({
      node: { name: 'c03', base: 'IDLE', flags: ['DRAIN', 'COMPLETING'], reason: 'bad | dimm' },
      line: 'idle+drain+completing|bad | dimm',
    });
    expect(parseCompactLine('c01|down+drain+reboot_issued|rolling-upgrade : reboot issued')?.node).toMatchObject({
      base: 'DOWN',
      flags: ['DRAIN', 'REBOOT_ISSUED'],
    });
    expect(parseCompactLine('c01|idle|none')?.node.reason).toBeUndefined();
    expect(parseCompactLine('garbage')).toBeUndefined();
  });

  it('reads the listing alone, and the detail only of nodes whose boot is judged, once per reboot', async () => {
    const transport = headNode();
    const reader = new SlurmNodeReader(transport, { clock });
    const first = await reader.read('workload-manager', ['c01', 'c02', 'c03', 'c04']);
    expect(first.get('c03')).toEqual({ name: 'c03', base: 'IDLE', flags: ['DRAIN'], reason: 'admin: bad dimm' });
    expect(kinds(transport.scripts)).toEqual(['compact']);
    expect(transport.scripts[0]).toBe("'sinfo' '-h' '-N' '-n' 'c[01-04]' '-O' 'NodeList:0|,StateComplete:0|,Reason:0'");
    // c03 is judged by its boot after a reboot asked at `since`: its detail gives the boot time.
    const since = 1_000;
    later();
    const judged = await reader.read('workload-manager', ['c01', 'c02', 'c03', 'c04'], { bootedSince: new Map([['c03', since]]) });
    expect(transport.scripts.slice(1)).toEqual([
      "'sinfo' '-h' '-N' '-n' 'c[01-04]' '-O' 'NodeList:0|,StateComplete:0|,Reason:0'",
      "'scontrol' '--version'",
      "env SLURM_TIME_FORMAT=%s 'scontrol' '-o' 'show' 'node' 'c03'",
    ]);
    expect(judged.get('c03')!.bootTime).toBeGreaterThan(since);
    expect(judged.get('c01')!.bootTime).toBeUndefined();
    // Its boot time read is after `since`: the next reads need the listing alone, and keep that boot time.
    later();
    const again = await reader.read('workload-manager', ['c03'], { bootedSince: new Map([['c03', since]]) });
    expect(kinds(transport.scripts).slice(4)).toEqual(['compact']);
    expect(again.get('c03')!.bootTime).toBe(judged.get('c03')!.bootTime);
  });

  it('reads a judged node again while its boot time is older than its reboot, except while it is still down or rebooting', async () => {
    let rebooting = true;
    const transport = headNode((script) =>
      rebooting && script.includes("'sinfo'")
        ? { stdout: compact.replace('c02|idle+drain|rolling-upgrade', 'c02|down+drain+reboot_issued|rolling-upgrade : reboot issued') }
        : undefined,
    );
    const reader = new SlurmNodeReader(transport, { clock });
    const rebootAt = Date.now() + 3_600_000;
    await reader.read('workload-manager', ['c02'], { bootedSince: new Map([['c02', rebootAt]]) });
    expect(kinds(transport.scripts)).toEqual(['compact']);
    rebooting = false;
    later();
    await reader.read('workload-manager', ['c02'], { bootedSince: new Map([['c02', rebootAt]]) });
    later();
    await reader.read('workload-manager', ['c02'], { bootedSince: new Map([['c02', rebootAt]]) });
    // The fixture's boot time is before `rebootAt`: every poll reads it again (a reboot shorter than a poll changes nothing else).
    expect(kinds(transport.scripts)).toEqual(['compact', 'compact', 'version', 'detail', 'compact', 'detail']);
  });

  it("reuses a listing within one moment (an increment's reads), but not for nodes it was told changed", async () => {
    const transport = headNode();
    const reader = new SlurmNodeReader(transport, { clock });
    later();
    await reader.read('workload-manager', ['c01', 'c02']);
    await reader.read('boot-service', ['c01', 'c02']);
    expect(kinds(transport.scripts)).toEqual(['compact']);
    reader.invalidate(['c02']);
    await reader.read('boot-service', ['c01', 'c02']);
    expect(transport.scripts.at(-1)).toBe("'sinfo' '-h' '-N' '-n' 'c02' '-O' 'NodeList:0|,StateComplete:0|,Reason:0'");
  });

  it('says so, naming the command and its error, when a command fails or prints what cannot be read, instead of reporting nodes unknown', async () => {
    const noJson = new SlurmNodeReader(
      headNode((s) =>
        s.includes("'--version'")
          ? { stdout: 'slurm 23.11.1\n' }
          : s.includes("'--json'")
            ? { exitCode: 1, stderr: "scontrol: unrecognized option '--json'\n" }
            : undefined,
      ),
    );
    await expect(noJson.read('workload-manager', ['c01'], { bootedSince: new Map([['c01', Infinity]]) })).rejects.toThrow(
      /'scontrol' '--json' 'show' 'node' 'c01' exited 1: scontrol: unrecognized option '--json'/,
    );
    const noController = new SlurmNodeReader(
      headNode((s) => (s.includes("'sinfo'") ? { exitCode: 1, stderr: 'slurm_load_node: Unable to contact slurm controller (connect failure)\n' } : undefined)),
    );
    const err = await noController.read('workload-manager', ['c01']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteServiceError);
    expect((err as Error).message).toMatch(/'sinfo' .* exited 1: slurm_load_node: Unable to contact slurm controller/);
    const garbled = new SlurmNodeReader(
      headNode((s) => (s.includes("'sinfo'") ? { stdout: 'sinfo: error: Invalid job format specification: StateComplete\n' } : undefined)),
    );
    await expect(garbled.read('workload-manager', ['c01'])).rejects.toThrow(/printed an unexpected line/);
    const noVersion = new SlurmNodeReader(
      headNode((s) => (s.includes("'--version'") ? { exitCode: 1, stderr: 'scontrol: fatal: Could not establish a configuration source\n' } : undefined)),
    );
    await expect(noVersion.read('workload-manager', ['c01'], { bootedSince: new Map([['c01', Infinity]]) })).rejects.toThrow(
      /'scontrol' '--version' exited 1: scontrol: fatal: Could not establish a configuration source/,
    );
  });

  it('leaves out only the names Slurm says it does not know', async () => {
    const transport = headNode((s) =>
      s.includes("'sinfo'")
        ? { stdout: 'c01|idle|none\n' }
        : s.includes("'-o'")
          ? { exitCode: 1, stdout: `${detail.split('\n')[0]}\nNode ghost not found\n` }
          : undefined,
    );
    const nodes = await new SlurmNodeReader(transport).read('workload-manager', ['c01', 'ghost']);
    expect([...nodes.keys()]).toEqual(['c01']);
  });

  it('asks again in halves when the transport cut the listing short', async () => {
    const lines = Array.from({ length: 8 }, (_, i) => `n${i}|idle|none`);
    const transport = new ScriptedHeadNode((s) => {
      if (s.includes("'--version'")) return { stdout: 'slurm 24.11.7\n' };
      if (s.includes("'sinfo'"))
        return s.includes('n[0-7]')
          ? { stdout: lines.join('\n').slice(0, 30), stdoutTruncated: true }
          : { stdout: lines.filter((l) => s.includes(l.split('|')[0]!) || s.includes('n[0-3]') || s.includes('n[4-7]')).join('\n') };
      return { stdout: JSON.stringify({ nodes: lines.map((l) => ({ name: l.split('|')[0], state: ['IDLE'], boot_time: { set: true, number: 1 } })) }) };
    });
    const nodes = await new SlurmNodeReader(transport).read(
      'workload-manager',
      lines.map((l) => l.split('|')[0]!),
    );
    expect(nodes.size).toBe(8);
    expect(transport.scripts.filter((s) => s.includes("'sinfo'")).map((s) => /'-n' '([^']+)'/.exec(s)![1])).toEqual(['n[0-7]', 'n[0-3]', 'n[4-7]']);
  });
});

describe('Slurm 23.02 and later: `scontrol --json show node` for what changed', () => {
  it.each(['v0.0.39', 'v0.0.40', 'v0.0.41', 'v0.0.42', 'v0.0.43', 'v0.0.44', 'v0.0.45'])('reads the node shape of data_parser %s', async (version) => {
    const json = fixture(`nodes-${version}.json`);
    const transport = new ScriptedHeadNode((s) => {
      if (s.includes("'--version'")) return { stdout: 'slurm 25.11.2\n' };
      if (s.includes("'sinfo'")) return { stdout: 'c01|idle+drain|x\nc02|down+drain|y\nc03|idle+drain+completing|z\nc04|mixed|none\n' };
      return { stdout: json };
    });
    const names = ['c01', 'c02', 'c03', 'c04'];
    const nodes = await new SlurmNodeReader(transport).read('workload-manager', names, { bootedSince: new Map(names.map((n) => [n, Infinity])) });
    expect([...nodes.values()]).toEqual([
      { name: 'c01', base: 'IDLE', flags: ['DRAIN'], reason: 'rolling-upgrade : reboot issued', bootTime: 1767225600000 },
      { name: 'c02', base: 'DOWN', flags: ['DRAIN', 'NOT_RESPONDING'], reason: 'rolling-upgrade : Not responding', bootTime: 1767225000000 },
      { name: 'c03', base: 'IDLE', flags: ['DRAIN', 'COMPLETING'], reason: 'bad dimm', bootTime: 1767220000000 },
      { name: 'c04', base: 'MIXED', flags: [], bootTime: 1767225700000 },
    ]);
    expect(transport.scripts.at(-1)).toBe("'scontrol' '--json' 'show' 'node' 'c[01-04]'");
  });
});
