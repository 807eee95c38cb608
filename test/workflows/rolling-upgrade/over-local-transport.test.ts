import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createSiteFromProfile } from '../../../adapters/site';
import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { parseSiteProfile } from '../../../core/site/site-profile';
import { runUpgrade, startTestRuntime } from '../../support/embedded';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';

/**
 * `transport: {type: local}` as on an admin host: the connectors run `scontrol`, `sinfo` and `wwctl`
 * with /bin/sh on this machine. Here those programs are stand-ins on PATH that pass their argv to the
 * simulated head node (test/support/sim-head-node.mjs), so the simulated Slurm is what they drive.
 */
describe('rolling upgrade over the local transport (scontrol, sinfo, wwctl run on this host)', () => {
  const bin = mkdtempSync(join(tmpdir(), 'local-slurm-'));
  for (const program of ['scontrol', 'sinfo', 'wwctl']) {
    const stub = join(bin, program);
    writeFileSync(stub, `#!/bin/sh\nexec '${process.execPath}' '${resolve('test/support/sim-head-node.mjs')}' ${program} "$@"\n`);
    chmodSync(stub, 0o755);
  }
  const saved = { PATH: process.env.PATH, SIM_SSM_URL: process.env.SIM_SSM_URL };
  let runtime: EmbeddedRuntime | undefined;
  afterAll(async () => {
    await runtime?.close();
    Object.assign(process.env, saved);
    if (saved.SIM_SSM_URL === undefined) delete process.env.SIM_SSM_URL;
    rmSync(bin, { recursive: true, force: true });
  });

  it('upgrades every node: drained, image selected, rebooted by Slurm once, back in service', async () => {
    runtime = await startTestRuntime({
      site: buildSite(4, { timing: { bootSeconds: 30, returnSeconds: 5 } }),
      connectors: async (simulator, { connectorState }) => {
        // LocalTransport runs its commands with this process's environment.
        process.env.PATH = `${bin}:${saved.PATH ?? '/usr/bin:/bin'}`;
        process.env.SIM_SSM_URL = simulator.urls.ssm;
        const profile = parseSiteProfile({
          transport: { type: 'local' },
          workloadManager: { type: 'scontrol' },
          bootService: { type: 'slurm-reboot', prepareCommand: 'wwctl node set --image {template} {nodes}' },
          inventory: { type: 'slurm' },
        });
        const { site } = await createSiteFromProfile(profile, { connectorState, clock: { now: () => simulator.simulator.clock.now() } });
        return site;
      },
    });
    const { outcome, report } = await runUpgrade(runtime, upgradeRequest({ upgradeStepSize: 2, pollIntervalSeconds: 30 }));
    expect(outcome.status).toBe('SUCCEEDED');
    expect(report.counts.UPGRADED).toBe(4);
    const sim = runtime.simulator.simulator;
    const state = runtime.simulator.state();
    for (let i = 0; i < 4; i++) {
      expect(state.nodes[nodeName(i)]).toMatchObject({ bootCount: 1, wlmState: 'IDLE' });
      expect(sim.headNode.images.get(nodeName(i))).toBe('img-2');
    }
    expect(state.violations).toEqual([]);
    // Everything reached Slurm through the local programs: drains, the reboot, reads.
    // A plain reboot: nextstate=RESUME (or ASAP's default of it) would lift every drain at registration (node_mgr.c).
    const reboots = sim.headNode.commandLog.filter((c) => c.startsWith("'scontrol' 'reboot' "));
    expect(reboots.length).toBeGreaterThan(0);
    expect(reboots.filter((c) => /ASAP|nextstate/i.test(c))).toEqual([]);
    expect(sim.headNode.commandLog.some((c) => c.startsWith("'scontrol' 'update'") && c.includes("'State=DRAIN'"))).toBe(true);
    // Each command is a shell and a node process here: generous on a loaded host.
  }, 300_000);
});
