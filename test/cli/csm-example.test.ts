import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import type { SiteStateFile } from '../../simulator/site-state-file';
import { upgradeArgs } from '../../scripts/upgrade-args';
import { runCli, runCliInProcess, startCli, type CliResult } from '../support/cli';

const examples = path.resolve(__dirname, '..', '..', 'examples');
const CSM_SITE = path.join(examples, 'sites', 'cray-csm-64.yaml');
const SLURM_NAMES_SITE = path.join(examples, 'sites', 'rolling-upgrade-64.yaml');
const upgrade = upgradeArgs({ json: true });

interface Report {
  state: string;
  completed: boolean;
  counts: Record<string, number>;
  messages: string[];
  nodes: Record<string, { status: string; reason?: string; wlmName?: string }>;
}

/** `rollout simulate` of `siteFile` as its own process, then `rollout upgrade --site-config` as another; the simulator stopped after. */
async function upgradeOverSimulate(siteFile: string, dir: string): Promise<{ result: CliResult; state: SiteStateFile; slurmNames: string[] }> {
  const profile = path.join(dir, `profile-${path.basename(siteFile)}`);
  const stateOut = path.join(dir, `state-${path.basename(siteFile)}.json`);
  const { child, done } = startCli(['simulate', '--site', siteFile, '--profile-out', profile, '--time-scale', '2000']);
  try {
    const urls = await new Promise<{ slurmrestd: string }>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))) as { slurmrestd: string });
      });
      void done.then((r) => reject(new Error(`rollout simulate ended (${r.code}): ${r.stderr}`)));
    });
    const slurm = (await (await fetch(`${urls.slurmrestd}/slurm/v0.0.41/nodes`)).json()) as { nodes: { name: string }[] };
    const result = await runCli([...upgrade, '--site-config', profile, '--site-state-out', stateOut]);
    return { result, state: JSON.parse(await readFile(stateOut, 'utf8')) as SiteStateFile, slurmNames: slurm.nodes.map((n) => n.name) };
  } finally {
    child.kill('SIGTERM');
    await done;
  }
}

const outcome = (report: Report) => ({
  state: report.state,
  completed: report.completed,
  counts: report.counts,
  nodes: Object.fromEntries(Object.entries(report.nodes).map(([name, { status, reason }]) => [name, { status, reason }])),
});

describe('the CSM example: xnames in HSM and BOS, nids in Slurm, boot sets', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-csm-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('upgrades the 64 nodes through rollout simulate and --site-config with the outcome of the same site over Slurm names alone', async () => {
    // One after the other: on 2 cores the run on the scaled clock must not compete for the CPU. The
    // baseline runs on virtual time, in this process (no hang: ~25 s of CPU; it only looked hung when
    // the suite's load stretched both runs past the old timeout).
    const baseline = await runCliInProcess([...upgrade, '--site', SLURM_NAMES_SITE]);
    const csm = await upgradeOverSimulate(CSM_SITE, dir);
    expect(baseline.code).toBe(0);
    expect(csm.result.code).toBe(0);
    // Slurm's view of the CSM site is by nid.
    expect(csm.slurmNames).toContain('nid000001');
    expect(csm.slurmNames.some((n) => n.startsWith('x'))).toBe(false);
    const report = JSON.parse(csm.result.stdout) as Report;
    expect(outcome(report)).toEqual(outcome(JSON.parse(baseline.stdout) as Report));
    expect(report.counts).toMatchObject({ UPGRADED: 61, FAILED: 3 });
    // One identity per node (its xname), both names shown.
    expect(report.nodes['x3000c0s9b0n1']).toMatchObject({ status: 'FAILED', reason: 'upgrading-boot-session-failed', wlmName: 'nid000018', phase: 'failed' });
    expect(report.messages.find((m) => m.startsWith('Step 1 of 8: draining'))).toMatch(/x3000c0s1b0n0.*\(Slurm: nid\[000001-00000[5-8]\]/);
    // The site saw it on the xnames: every node rebooted once, the UANs untouched.
    expect(csm.state.nodes['x3000c0s1b0n0']!.bootCount).toBe(1);
    expect(csm.state.nodes['x3002c0s1b0n0']!.bootCount).toBe(0);
    expect(csm.state.groups['failed-nodes']).toHaveLength(3);
  }, 300_000);

  it('fails a node outside the boot sets at once with its reason, never drained or rebooted; the rest go on', async () => {
    // The first 18 compute nodes of the example (some busy with jobs, the last one's boot fails), on virtual
    // time: the processes and the scaled clock are the case above's; this one is about the boot sets.
    const site = parse(await readFile(CSM_SITE, 'utf8')) as { nodes: { name: string; nid: number; role?: string }[]; groups: Record<string, string[]> };
    site.nodes = site.nodes.filter((n) => n.nid <= 18 || n.name.startsWith('x3002'));
    site.groups['compute-nodes'] = site.nodes.filter((n) => n.nid <= 18).map((n) => n.name);
    // x3000c0s2b0n0 becomes an Application node: cos-2.4's boot set (node_roles_groups [Compute]) would not reboot it.
    site.nodes.find((n) => n.name === 'x3000c0s2b0n0')!.role = 'Application';
    const file = path.join(dir, 'csm-outside-boot-set.yaml');
    const stateOut = path.join(dir, 'state-csm-outside-boot-set.json');
    await writeFile(file, stringify(site));
    const result = await runCliInProcess([...upgrade, '--site', file, '--site-state-out', stateOut]);
    const state = JSON.parse(await readFile(stateOut, 'utf8')) as SiteStateFile;
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    // Never out of service: the live view shows no interval for it.
    expect(report.nodes['x3000c0s2b0n0']).toEqual({ status: 'FAILED', reason: 'upgrading-not-in-boot-set', wlmName: 'nid000003', phase: 'failed' });
    expect(report.counts).toMatchObject({ UPGRADED: 16, FAILED: 2 });
    expect(report.nodes['x3000c0s9b0n1']).toMatchObject({ status: 'FAILED', reason: 'upgrading-boot-session-failed' });
    expect(state.nodes['x3000c0s2b0n0']).toMatchObject({ bootCount: 0, outOfService: [], wlmState: 'IDLE' });
    expect(state.nodes['x3000c0s1b0n0']!.bootCount).toBe(1);
    expect(state.groups['failed-nodes']).toContain('x3000c0s2b0n0');
    // Said before the first drain.
    const said = report.messages.findIndex((m) => m.includes('upgrading-not-in-boot-set'));
    const firstDrain = report.messages.findIndex((m) => m.includes('draining'));
    expect(said).toBeGreaterThanOrEqual(0);
    expect(said).toBeLessThan(firstDrain);
    expect(report.messages[said]).toMatch(/x3000c0s2b0n0 \(Slurm: nid000003\)/);
  }, 180_000);
});
