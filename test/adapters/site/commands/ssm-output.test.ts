import { readSsmStdout, ssmCommandOutput, ssmStringPrefix, SSM_STDOUT_BYTES, SSM_TRUNCATED_MARKER } from '../../../../core/site/ssm-output';
import { nodeNames, nodesOf } from '../../../support/simulator';
import { startSsmTestSite, type SsmTestSite } from '../../../support/ssm-site';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe("SSM's output limit, in bytes, as the agent's pluginutil.StringPrefix cuts it", () => {
  it('keeps output under 24,000 bytes whole, and cuts longer output to exactly 24,000 bytes ending with the marker', () => {
    const short = 'a'.repeat(SSM_STDOUT_BYTES - 1);
    expect(ssmStringPrefix(short, SSM_STDOUT_BYTES)).toBe(short);
    const cut = ssmStringPrefix('a'.repeat(SSM_STDOUT_BYTES), SSM_STDOUT_BYTES);
    expect(bytes(cut)).toBe(SSM_STDOUT_BYTES);
    expect(cut.endsWith(SSM_TRUNCATED_MARKER)).toBe(true);
  });

  it('counts bytes, not characters: 12,000 two-byte characters are cut, and a cut inside a character reads as U+FFFD', () => {
    const text = 'é'.repeat(12_000); // 12,000 characters, 24,000 bytes
    expect(text.length).toBeLessThan(SSM_STDOUT_BYTES);
    const cut = ssmStringPrefix(text, SSM_STDOUT_BYTES);
    expect(cut.endsWith(SSM_TRUNCATED_MARKER)).toBe(true);
    // 23,980 bytes of é: an even count, no character split.
    expect(cut.slice(0, -SSM_TRUNCATED_MARKER.length)).toBe('é'.repeat(11_990));
    const split = ssmStringPrefix(`ab${'€'.repeat(10_000)}`, SSM_STDOUT_BYTES); // 2 + 3 x 10,000 bytes; 23,980 - 2 is no multiple of 3
    expect(split.includes('\uFFFD')).toBe(true);
    expect(readSsmStdout(split)).toMatchObject({ truncated: true });
  });

  it('stderr: the agent prefix, then the 8,000 GetCommandInvocation keeps', () => {
    const { stderr } = ssmCommandOutput('', 'x'.repeat(30_000));
    expect(bytes(stderr)).toBe(8_000);
  });

  it('reads the marker only where the agent puts it: output that merely ends with its text is whole', () => {
    expect(readSsmStdout(`done ${SSM_TRUNCATED_MARKER}`)).toEqual({ stdout: `done ${SSM_TRUNCATED_MARKER}`, truncated: false });
    const cut = ssmStringPrefix('node=x ok\n'.repeat(3000), SSM_STDOUT_BYTES);
    const read = readSsmStdout(cut);
    expect(read.truncated).toBe(true);
    expect(read.stdout.endsWith(SSM_TRUNCATED_MARKER)).toBe(false);
  });
});

describe('the SSM transport against the simulated agent (the real @aws-sdk/client-ssm)', () => {
  let t: SsmTestSite;
  afterEach(() => t.close());

  it('sees multi-byte output past 24,000 bytes as cut, though it is fewer than 24,000 characters', async () => {
    const names = nodeNames(24);
    // Each node's reason: 500 two-byte characters, so `scontrol --json show node` runs past 24,000 bytes in far fewer characters.
    t = await startSsmTestSite({ nodes: nodesOf(names, () => ({ wlm: { state: 'DRAINED' as const, reason: 'é'.repeat(500) } })), groups: { compute: names } });
    const result = await t.transport.run("'scontrol' '--json' 'show' 'node'");
    expect(result.stdoutTruncated).toBe(true);
    expect(result.stdout.endsWith(SSM_TRUNCATED_MARKER)).toBe(false);
    expect(result.stdout.length).toBeLessThan(SSM_STDOUT_BYTES);
    expect(bytes(result.stdout) + bytes(SSM_TRUNCATED_MARKER)).toBeGreaterThanOrEqual(SSM_STDOUT_BYTES - 2);
    // A few nodes fit: whole.
    const few = await t.transport.run(`'scontrol' '--json' 'show' 'node' '${names[0]}'`);
    expect(few.stdoutTruncated).toBe(false);
    expect(JSON.parse(few.stdout)).toMatchObject({ nodes: [{ reason: 'é'.repeat(500) }] });
  });
});
