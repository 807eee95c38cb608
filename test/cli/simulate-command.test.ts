import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadSiteProfileFile } from '../../adapters/site';
import type { SiteStateFile } from '../../simulator/site-state-file';
import { runCliInProcess, type CliResult } from '../support/cli';
import { startSimulate } from '../support/simulate-process';
import { upgradeArgs } from '../../scripts/upgrade-args';

const examples = path.resolve(__dirname, '..', '..', 'examples');
const site = (name: string) => path.join(examples, 'sites', name);
const strategy = path.join(examples, 'strategies', 'shipyard-example.yaml');

describe('rollout simulate', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-simulate-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('prints its URLs as the first line, answers on each, writes a valid profile, and stops on SIGTERM', async () => {
    const sim = await startSimulate(site('rolling-upgrade-64.yaml'), dir, ['--time-scale', '500']);
    try {
      expect(Object.keys(sim.urls).sort()).toEqual(['bos', 'control', 'hsm', 'provisioner', 'slurmrestd', 'ssm']);
      const get = async (url: string) => {
        const res = await fetch(url);
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      expect((await get(`${sim.urls.control}/sim/time`)).body).toMatchObject({ timeScale: 500 });
      expect((await get(`${sim.urls.slurmrestd}/slurm/v0.0.41/nodes`)).body.nodes).toHaveLength(64);
      expect((await get(`${sim.urls.bos}/v2/sessiontemplates/cos-2.4`)).status).toBe(200);
      expect((await get(`${sim.urls.hsm}/hsm/v2/groups/compute-nodes`)).body).toMatchObject({ label: 'compute-nodes' });
      expect((await get(`${sim.urls.provisioner}/provisioner/v1/actions/none`)).status).toBe(404);
      const state = (await get(`${sim.urls.control}/sim/state`)).body;
      expect(Object.keys(state)).toEqual(['groups', 'nodes', 'taskLog']);

      const { profile } = await loadSiteProfileFile(sim.profile);
      expect(profile).toMatchObject({
        workloadManager: { type: 'slurmrestd', url: sim.urls.slurmrestd },
        bootService: { type: 'bos', url: sim.urls.bos },
        inventory: { type: 'hsm', url: sim.urls.hsm },
        provisioner: { type: 'http', url: sim.urls.provisioner },
        simulatedTime: { timeScale: 500, controlUrl: sim.urls.control },
      });
    } finally {
      expect((await sim.stop()).code).toBe(0);
    }
  });

  it('--profile-host names the host the profile reaches it by (a site listening on every address)', async () => {
    const sim = await startSimulate(site('rolling-upgrade-64.yaml'), dir, ['--host', '0.0.0.0', '--profile-host', 'localhost']);
    try {
      const port = new URL(sim.urls.control).port;
      const { profile } = await loadSiteProfileFile(sim.profile);
      expect(profile).toMatchObject({
        workloadManager: { url: `http://localhost:${port}` },
        bootService: { url: `http://localhost:${port}/bos` },
        simulatedTime: { controlUrl: `http://localhost:${port}` },
      });
      expect((await fetch(`${profile.simulatedTime!.controlUrl}/sim/time`)).status).toBe(200);
    } finally {
      await sim.stop();
    }
    const bad = await runCliInProcess(['simulate', '--site', site('rolling-upgrade-64.yaml'), '--profile-host', 'evil/host?x=']);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/--profile-host must be a host name or an IP address/) });
  });

  it('writes a profile a simulated Slurm 22.05 can serve: scontrol over SSM, never its GET-only slurmrestd', async () => {
    const site2205 = path.join(dir, 'slurm-22.05.yaml');
    await writeFile(site2205, 'nodes: [{name: c01, nid: 1}]\nslurm: {version: 22.05.8}\n');
    const http = await runCliInProcess(['simulate', '--site', site2205, '--profile-out', path.join(dir, 'p-http.yaml')]);
    expect(http).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--transport http: .*serves v0\.0\.36, v0\.0\.37, v0\.0\.38.*use a command transport/),
    });
    const sim = await startSimulate(site2205, dir, ['--transport', 'ssm']);
    try {
      expect((await loadSiteProfileFile(sim.profile)).profile.workloadManager).toMatchObject({ type: 'scontrol' });
      expect((await fetch(`${sim.urls.slurmrestd}/slurm/v0.0.41/nodes`)).status).toBe(404);
    } finally {
      await sim.stop();
    }
  });

  it('refuses a bad site file with exit 2 before serving', async () => {
    const result = await runCliInProcess(['simulate', '--site', path.join(dir, 'missing.yaml')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/cannot read it/);
  });
});

describe('--site-config against rollout simulate gives the outcome of --site', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-site-config-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** Runs the same command with --site, then with --site-config against a fresh `rollout simulate` of the same file. */
  async function both(
    siteFile: string,
    args: string[],
    simulateArgs: string[] = [],
  ): Promise<{ simulated: CliResult; connected: CliResult; states: [unknown, unknown] }> {
    const stateOf = (kind: string) => path.join(dir, `${kind}-${simulateArgs.join('')}-${path.basename(siteFile)}.json`);
    const simulated = await runCliInProcess([...args, '--site', siteFile, '--site-state-out', stateOf('site')]);
    const sim = await startSimulate(siteFile, dir, simulateArgs);
    try {
      const connected = await runCliInProcess([...args, '--site-config', sim.profile, '--site-state-out', stateOf('config')]);
      const states = await Promise.all(
        [stateOf('site'), stateOf('config')].map(async (f) => outcomeOfState(JSON.parse(await readFile(f, 'utf8')) as SiteStateFile)),
      );
      return { simulated, connected, states: states as [unknown, unknown] };
    } finally {
      await sim.stop();
    }
  }

  const RUN_ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  /** What the run did to the site, without when (out-of-service times depend on real scheduling). */
  function outcomeOfState(state: SiteStateFile) {
    const nodes = Object.fromEntries(
      // A Slurm reason names the run that set it (core/site/node-claims.ts): two runs, two ids.
      Object.entries(state.nodes).map(([name, n]) => [
        name,
        { wlmState: n.wlmState, wlmReason: n.wlmReason?.replace(RUN_ID, '<run id>'), bootCount: n.bootCount, outOfServiceSpells: n.outOfService.length },
      ]),
    );
    return { groups: state.groups, nodes };
  }

  const upgrade = upgradeArgs({ json: true });

  it.each([
    ['slurmrestd, BOS and HSM', []],
    ['scontrol over SSM, slurm-reboot and the slurm inventory', ['--transport', 'ssm']],
    // A shell and curl per command: five times the default time scale keeps the run short.
    [
      'scontrol, slurm-reboot and the slurm inventory over the local transport (stand-in programs run on this host)',
      ['--transport', 'local', '--time-scale', '5000'],
    ],
  ])(
    'rolling upgrade of examples/sites/rolling-upgrade-64.yaml over %s',
    async (_over, simulateArgs: string[]) => {
      const { simulated, connected, states } = await both(site('rolling-upgrade-64.yaml'), upgrade, simulateArgs);
      expect(simulated.code).toBe(0);
      expect(connected.code).toBe(simulated.code);
      // What the run did to each node, without when: the --site run is on virtual time, the other on a
      // scaled clock, so phase times (`since`, `outOfService`) differ by real scheduling.
      type NodeOutcome = { status: string; reason?: string; since?: string; outOfService?: unknown };
      const outcome = (r: CliResult) => {
        const report = JSON.parse(r.stdout) as { state: string; completed: boolean; counts: unknown; nodes: Record<string, NodeOutcome> };
        const nodes = Object.fromEntries(
          Object.entries(report.nodes).map(([name, { since: _since, outOfService, ...rest }]) => [
            name,
            { ...rest, wasOutOfService: outOfService !== undefined },
          ]),
        );
        return { state: report.state, completed: report.completed, counts: report.counts, nodes };
      };
      const expected = outcome(simulated);
      const returnTimeouts = Object.keys(expected.nodes).filter((n) => expected.nodes[n]!.reason === 'upgrading-time-out-wlm-waiting');
      const bootFailures = Object.keys(expected.nodes).filter((n) => expected.nodes[n]!.reason === 'upgrading-boot-session-failed');
      type NodeState = { wlmReason?: string };
      const [siteState, connectedState] = states as [{ nodes: Record<string, NodeState> }, { nodes: Record<string, NodeState> }];
      if (simulateArgs.includes('ssm') || simulateArgs.includes('local')) {
        // The --site run reboots through BOS, a reboot Slurm did not issue: slurmd goes away and, SlurmdTimeout
        // later, ping_nodes.c sets the node DOWN with ` : Not responding` appended to our failure mark (23.02 on).
        // slurm-reboot's is a reboot Slurm issued (REBOOT_ISSUED is not pinged): at ResumeTimeout it is DOWN
        // "reboot timed out", our failure mark then replaces that reason, and a DOWN node is not set DOWN again.
        expect(bootFailures.length).toBeGreaterThan(0);
        for (const n of bootFailures) {
          expect(siteState.nodes[n]!.wlmReason).toMatch(/^upgrading-boot-session-failed <run id> : Not responding$/);
          siteState.nodes[n]!.wlmReason = 'upgrading-boot-session-failed <run id>';
        }
        // Without a boot service, a node that booted but whose slurmd never registers is a reboot Slurm never
        // saw end: at ResumeTimeout check_reboot_nodes() sets it DOWN "reboot timed out", which slurm-reboot
        // reports as a failed boot (rather than the return timeout). All else is equal.
        expect(returnTimeouts.length).toBeGreaterThan(0);
        for (const n of returnTimeouts) {
          expected.nodes[n] = { ...expected.nodes[n]!, status: 'FAILED', reason: 'upgrading-boot-session-failed' };
          delete siteState.nodes[n];
          delete connectedState.nodes[n];
        }
      }
      expect(outcome(connected)).toEqual(expected);
      expect(connectedState).toEqual(siteState);
    },
    240_000,
  );

  it.each([
    ['group-deployment-example.yaml', 'HSM and the provisioner API', []],
    ['group-deployment-ntp-prepare-fails.yaml', 'HSM and the provisioner API', []],
    ['group-deployment-compute-deploy-fails.yaml', 'HSM and the provisioner API', []],
    ['group-deployment-example.yaml', 'the slurm inventory and the command provisioner over SSM', ['--transport', 'ssm']],
    ['group-deployment-example.yaml', 'the slurm inventory and the command provisioner over the local transport', ['--transport', 'local']],
    ['group-deployment-ntp-prepare-fails.yaml', 'the slurm inventory and the command provisioner over the local transport', ['--transport', 'local']],
  ])(
    'group deployment of examples/sites/%s over %s',
    async (file, _over, simulateArgs) => {
      const { simulated, connected, states } = await both(site(file), ['deploy', '--strategy', strategy, '--json'], simulateArgs);
      expect(connected.code).toBe(simulated.code);
      const outcome = (r: CliResult) => {
        const report = JSON.parse(r.stdout) as { status: string; criticalGroupsFailed: boolean; groups: Record<string, { stage: string }>; nodes: unknown };
        return {
          status: report.status,
          criticalGroupsFailed: report.criticalGroupsFailed,
          groups: Object.fromEntries(Object.entries(report.groups).map(([g, v]) => [g, v.stage])),
          nodes: report.nodes,
        };
      };
      expect(outcome(connected)).toEqual(outcome(simulated));
      expect(states[1]).toEqual(states[0]);
    },
    180_000,
  );

  it('takes exactly one of --site and --site-config', async () => {
    const neither = await runCliInProcess(upgrade);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(/exactly one of --site FILE .* and --site-config FILE/);
    const both = await runCliInProcess([...upgrade, '--site', site('rolling-upgrade-64.yaml'), '--site-config', 'x.yaml']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/cannot be used with/);
  });

  it('names the bad field of a profile, with exit 2, before anything starts', async () => {
    const bad = path.join(dir, 'bad-profile.yaml');
    await writeFile(
      bad,
      'workloadManager: {type: slurmrestd, url: "http://slurm:6820", token: {env: SLURM_JWT}}\nbootService: {type: bos, url: https://bos}\ninventory: {type: hsm, url: https://hsm}\n',
    );
    const result = await runCliInProcess(['plan', 'deploy', '--site-config', bad]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`Invalid site profile ${bad}: workloadManager.url: a token is only sent over https`);
  });
});
