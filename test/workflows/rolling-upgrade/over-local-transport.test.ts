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

  it("gives an admin's drain reason back byte for byte after Slurm's reboot appended to it, whatever quotes, `$()` or non-ASCII it holds", async () => {
    await runtime?.close();
    const reason = 'ticket #4521 "disk" é; $(id) `id` \'x\'';
    // A tab cannot be sent back through scontrol's one line per node: left as Slurm shows it, and said.
    const tabbed = 'bad\tdimm';
    runtime = await startTestRuntime({
      site: buildSite(3, {
        timing: { bootSeconds: 30, returnSeconds: 5 },
        node: (i) => (i === 0 ? { wlm: { state: 'DRAINED', reason } } : i === 1 ? { wlm: { state: 'DRAINED', reason: tabbed } } : {}),
      }),
      connectors: async (simulator, { connectorState }) => {
        process.env.PATH = `${bin}:${saved.PATH ?? '/usr/bin:/bin'}`;
        process.env.SIM_SSM_URL = simulator.urls.ssm;
        const profile = parseSiteProfile({
          transport: { type: 'local' },
          workloadManager: { type: 'scontrol' },
          bootService: { type: 'slurm-reboot' },
          inventory: { type: 'slurm' },
        });
        const { site } = await createSiteFromProfile(profile, { connectorState, clock: { now: () => simulator.simulator.clock.now() } });
        return site;
      },
    });
    const { outcome, report } = await runUpgrade(runtime, upgradeRequest({ upgradeStepSize: 3, pollIntervalSeconds: 30 }));
    expect(outcome.status).toBe('SUCCEEDED');
    expect(report.counts.UPGRADED).toBe(3);
    const state = runtime.simulator.state();
    expect(state.nodes[nodeName(0)]).toMatchObject({ bootCount: 1, wlmState: 'DRAINED', wlmReason: reason, resumeCount: 0 });
    expect(state.nodes[nodeName(1)]).toMatchObject({ bootCount: 1, wlmState: 'DRAINED', wlmReason: `${tabbed} : reboot issued`, resumeCount: 0 });
    expect(state.nodes[nodeName(2)]).toMatchObject({ bootCount: 1, wlmState: 'IDLE' });
    expect(state.violations).toEqual([]);
    expect(report.messages).toContainEqual(
      expect.stringContaining(
        `1 admin drain reason(s) left as Slurm shows them, with its suffix, as they cannot be sent back whole: ${nodeName(1)} (its reason holds a control character or a newline)`,
      ),
    );
  }, 300_000);
});
