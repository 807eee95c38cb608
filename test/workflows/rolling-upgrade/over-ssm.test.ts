import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { parse } from 'yaml';
import { HEAD_NODE_INSTANCE_ID } from '../../../simulator/models/head-node';
import type { SlurmRebootSession } from '../../../adapters/site/commands';
import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import type { SiteDefinition } from '../../../simulator';
import { runUpgrade, startTestRuntime } from '../../support/embedded';
import { buildSite, nodeName, upgradeRequest } from '../../support/sites';
import { freshSsmConnectorsPerCall, profileConnectors, ssmConnectors } from '../../support/ssm-connectors';

/** What a run leaves behind that both paths must agree on. */
async function outcomeOf(runtime: EmbeddedRuntime, request: Record<string, unknown>) {
  const { outcome, report } = await runUpgrade(runtime, request);
  const state = runtime.simulator.state();
  const nodes = Object.fromEntries(
    Object.entries(state.nodes).map(([name, n]) => [name, { bootCount: n.bootCount, wlmState: n.wlmState, wlmReason: n.wlmReason }]),
  );
  return {
    status: outcome.status,
    state: report.state,
    completed: report.completed,
    nodes: report.nodes,
    counts: report.counts,
    site: nodes,
    groups: state.groups,
    violations: state.violations,
  };
}

describe('rolling upgrade through scontrol over SSM, slurm-reboot and the slurm inventory', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  const compare = async (site: () => SiteDefinition, request: Record<string, unknown>) => {
    runtime = await startTestRuntime({ site: site() });
    const overHttp = await outcomeOf(runtime, request);
    await runtime.close();
    runtime = await startTestRuntime({ site: site(), connectors: ssmConnectors });
    const overSsm = await outcomeOf(runtime, request);
    return { overHttp, overSsm, runtime };
  };

  it('gives the outcome and site state of the HTTP path when all goes well, with the image selected on every node', async () => {
    const { overHttp, overSsm, runtime: r } = await compare(() => buildSite(7), upgradeRequest({ upgradeStepSize: 3 }));
    expect(overSsm).toEqual(overHttp);
    expect(overSsm.counts.UPGRADED).toBe(7);
    for (let i = 0; i < 7; i++) expect(r.simulator.simulator.headNode.images.get(nodeName(i))).toBe('img-2');
  });

  it('fails the same nodes when boots fail and a node never returns (a boot without slurmd is a reboot Slurm times out)', async () => {
    const site = () => buildSite(6, { node: (i) => (i === 1 ? { faults: { boot: 'fail' } } : i === 4 ? { faults: { returnToService: 'never' } } : {}) });
    const { overHttp, overSsm } = await compare(site, upgradeRequest({ wlmReturnTimeoutSeconds: 300, bootTimeoutSeconds: 900 }));
    // Without a boot service, a node that booted but whose slurmd never registers looks to Slurm like a
    // reboot that never ended: slurmctld sets it DOWN `reboot timed out` at ResumeTimeout (600 s on this
    // site, within the boot timeout), so its boot session fails. All else is equal.
    expect(overHttp.nodes[nodeName(4)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-time-out-wlm-waiting' });
    expect(overSsm.nodes[nodeName(4)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-boot-session-failed' });
    // A boot that fails is seen later without a boot service: BOS says so when the boot ends (60 s), while
    // Slurm only sets the rebooting node DOWN `reboot timed out` at ResumeTimeout (600 s), as the real
    // slurmctld does (check_reboot_nodes). So the verdicts agree and the times differ.
    const verdicts = (nodes: typeof overSsm.nodes) =>
      Object.fromEntries(Object.entries(nodes).map(([name, n]) => [name, { status: n.status, phase: n.phase, reason: n.reason }]));
    expect({ ...verdicts(overSsm.nodes), [nodeName(4)]: undefined }).toEqual({ ...verdicts(overHttp.nodes), [nodeName(4)]: undefined });
    expect(overSsm.nodes[nodeName(1)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-boot-session-failed', since: '2026-01-01T00:10:00.000Z' });
    expect(overHttp.nodes[nodeName(1)]).toMatchObject({ status: 'FAILED', reason: 'upgrading-boot-session-failed', since: '2026-01-01T00:01:00.000Z' });
    expect(overSsm.counts).toEqual(overHttp.counts);
    expect(overSsm.groups).toEqual(overHttp.groups);
  });

  it('recognises rebooted nodes when every call builds its connectors afresh (one Lambda per activity): the request time comes from the table', async () => {
    runtime = await startTestRuntime({ site: buildSite(5), connectors: freshSsmConnectorsPerCall });
    const { outcome, report } = await runUpgrade(runtime, upgradeRequest({ upgradeStepSize: 2 }));
    expect(outcome.status).toBe('SUCCEEDED');
    expect(report.counts.UPGRADED).toBe(5);
    const sim = runtime.simulator.simulator;
    // Rebooted once each: no retry or fresh instance asked for a second reboot.
    for (let i = 0; i < 5; i++) expect(runtime.simulator.state().nodes[nodeName(i)]!.bootCount).toBe(1);
    // The boot sessions slurm-reboot wrote, read back from the table: every node's slurmd registered after its session's request.
    const { Items = [] } = await runtime.dynamoDb.client.send(new ScanCommand({ TableName: runtime.dynamoDb.tableName }));
    const sessions = Items.filter((item) => String(item.pk).startsWith('CONNECTOR#slurm-reboot#')).map((item) => item.record as SlurmRebootSession);
    expect(sessions.flatMap((s) => s.nodes).sort()).toEqual(Array.from({ length: 5 }, (_, i) => nodeName(i)).sort());
    for (const session of sessions) {
      for (const node of session.nodes) expect(sim.workloadManager.get(node)!.bootTime).toBeGreaterThanOrEqual(session.requestedAt!);
    }
  });

  it("reboots the upgrading group of the profile's file inventory (slurmrestd + slurm-reboot with nodeset + file inventory, the xCAT shape)", async () => {
    const site = () => buildSite(5);
    runtime = await startTestRuntime({ site: site() });
    const overHttp = await outcomeOf(runtime, upgradeRequest());
    await runtime.close();

    // The inventory file holds the groups; the simulator's own groups (Slurm's features) never see the upgrading group.
    const dir = await mkdtemp(join(tmpdir(), 'xcat-'));
    try {
      await writeFile(join(dir, 'inventory.yaml'), JSON.stringify(site()), 'utf8');
      const xcat = profileConnectors(
        (urls) => ({
          workloadManager: { type: 'slurmrestd', url: urls.slurmrestd },
          bootService: {
            type: 'slurm-reboot',
            transport: { type: 'ssm', instanceIds: [HEAD_NODE_INSTANCE_ID], region: 'us-east-1', endpoint: urls.ssm },
            prepareCommand: 'nodeset {nodes} osimage={template}',
          },
          inventory: { type: 'file', path: 'inventory.yaml' },
          simulatedTime: { timeScale: 1, controlUrl: urls.control },
          allowInsecureHttp: true,
        }),
        dir,
      );
      runtime = undefined;
      runtime = await startTestRuntime({ site: site(), connectors: xcat });
      const overFile = await outcomeOf(runtime, upgradeRequest());
      expect(overFile.counts).toEqual(overHttp.counts);
      expect(overFile.nodes).toEqual(overHttp.nodes);
      expect(overFile.counts.UPGRADED).toBe(5);
      for (let i = 0; i < 5; i++) {
        expect(overFile.site[nodeName(i)]!.bootCount).toBe(1);
        expect(runtime.simulator.simulator.headNode.images.get(nodeName(i))).toBe('img-2');
      }
      // The group edits went to the file, as they went to HSM on the HTTP path.
      const file = parse(await readFile(join(dir, 'inventory.yaml'), 'utf8')) as { groups: Record<string, string[]> };
      expect(file.groups).toEqual(overHttp.groups);
      expect(overFile.groups['upgrading']).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
