import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LocalTransport } from '../../../adapters/site/commands/local-transport';
import { ScontrolWorkloadManager, scontrolReason } from '../../../adapters/site/commands/scontrol-workload-manager';
import { InvalidNameError, siteReasonProblem, validReason, validSiteReason } from '../../../core/site/names';
import { scontrolReasonValue } from '../../../simulator/models/head-node';
import { shellWords } from '../../../simulator/shell-words';
import { nodeNames, nodesOf, startTestSite, type TestSite } from '../../support/simulator';
import { startSsmTestSite, type SsmTestSite } from '../../support/ssm-site';

// Reasons an admin may have set with scontrol or slurmrestd: every one must come back byte for byte and run nothing.
const REASONS = [
  'ticket #4521 "disk" é; $(id)',
  "it's `id` & $HOME | > /tmp/x",
  '"fully quoted"',
  '"starts with a quote',
  'ends with a quote"',
  '""',
  'tabs are not here but unicode is: 日本語 ✓',
];

describe("an admin's reason as the connectors send it", () => {
  it('is refused as user input by the strict pattern, and accepted back from the site when printable', () => {
    for (const reason of REASONS) {
      expect(() => validReason(reason)).toThrow(InvalidNameError);
      expect(validSiteReason(reason)).toBe(reason);
    }
    expect(siteReasonProblem('a\nb')).toBe('holds a control character or a newline');
    expect(siteReasonProblem('a\u0085b')).toBe('holds a control character or a newline');
    expect(siteReasonProblem('   ')).toBe('is blank');
    expect(siteReasonProblem('x'.repeat(1025))).toBe('is longer than 1024 characters');
    expect(() => validSiteReason('a\rb', 'reason')).toThrow(/reason.*control character/);
  });

  it('is the reason scontrol sends once it drops one leading and one trailing quote (update_node.c)', () => {
    for (const reason of REASONS) expect(scontrolReasonValue(scontrolReason(reason))).toBe(reason);
    expect(scontrolReason('plain')).toBe('plain');
    expect(scontrolReasonValue('"a"')).toBe('a');
    expect(scontrolReasonValue('a"')).toBe('a');
  });

  describe('over the local transport (/bin/sh -c, a stand-in scontrol recording its argv)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fake-scontrol-'));
    symlinkSync(resolve('test/support/fake-scontrol.sh'), join(dir, 'scontrol'));
    const log = join(dir, 'argv.log');
    const transport = new LocalTransport({ env: { PATH: `${dir}:/usr/bin:/bin`, FAKE_SCONTROL_LOG: log } });
    const calls = () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split('\0').slice(0, -1));

    it.each(REASONS)('reaches scontrol as one argument that scontrol reads as %j', async (reason) => {
      await new ScontrolWorkloadManager({ transport }).drainNodes(['n1', 'n2'], reason);
      const argv = calls().at(-1)!;
      expect(argv.slice(0, 3)).toEqual(['update', 'NodeName=n[1-2]', 'State=DRAIN']);
      expect(argv).toHaveLength(4);
      expect(scontrolReasonValue(argv[3]!.replace(/^Reason=/, ''))).toBe(reason);
    });
  });

  describe('over SSM to the simulated head node', () => {
    let t: SsmTestSite;
    afterEach(() => t.close());

    it('is parsed by the head node as a shell would and set byte for byte', async () => {
      const names = nodeNames(REASONS.length);
      t = await startSsmTestSite({ nodes: nodesOf(names) });
      const wlm = new ScontrolWorkloadManager({ transport: t.transport });
      for (const [i, reason] of REASONS.entries()) await wlm.drainNodes([names[i]!], reason);
      const nodes = await wlm.getNodes(names);
      for (const [i, reason] of REASONS.entries()) expect(nodes.get(names[i]!)).toMatchObject({ flags: ['DRAIN'], reason });
      // The command the head node ran is one quoted word per argument: nothing to expand.
      for (const command of t.site.simulator.headNode.commandLog.filter((c) => c.includes("'update'"))) expect(shellWords(command)).toHaveLength(5);
    });
  });

  describe('over slurmrestd (a JSON body)', () => {
    let t: TestSite;
    afterEach(() => t.close());

    it('is set byte for byte', async () => {
      const names = nodeNames(REASONS.length);
      t = await startTestSite({ nodes: nodesOf(names) });
      const wlm = t.clients.workloadManager;
      for (const [i, reason] of REASONS.entries()) await wlm.drainNodes([names[i]!], reason);
      const nodes = await wlm.getNodes(names);
      for (const [i, reason] of REASONS.entries()) expect(nodes.get(names[i]!)).toMatchObject({ flags: ['DRAIN'], reason });
    });
  });
});
