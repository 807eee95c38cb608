import { ScontrolWorkloadManager } from '../../../adapters/site/commands/scontrol-workload-manager';
import { SlurmRestWorkloadManager } from '../../../adapters/site/slurm-rest-workload-manager';
import type { WorkloadManager } from '../../../ports/site';
import { nodeNames, nodesOf } from '../../support/simulator';
import { startSsmTestSite, type SsmTestSite } from '../../support/ssm-site';

/**
 * Issue 26, item 7: the reason a run blanks on a node it returned (Slurm 24.11 without accounting
 * keeps it through RESUME). Slurm takes no empty reason, so one blank: read back as none by every connector.
 */
describe('clearReasons on every workload-manager connector', () => {
  const names = nodeNames(3);
  const claim = 'rolling-upgrade a1b2c3d4-0000-4000-8000-000000000001 : reboot issued';
  let t: SsmTestSite;
  beforeEach(async () => {
    t = await startSsmTestSite({
      nodes: nodesOf(names).map((n, i) => ({ ...n, wlm: { state: 'IDLE' as const, ...(i < 2 ? {} : { reason: 'bad dimm' }) } })),
      slurm: { version: '24.11.5', accountingStorage: 'none' },
    });
  });
  afterEach(() => t.close());

  it.each([
    ['scontrol over SSM', () => new ScontrolWorkloadManager({ transport: t.transport })],
    ['slurmrestd v0.0.42 (batch)', () => new SlurmRestWorkloadManager({ baseUrl: t.site.urls.slurmrestd, apiVersion: 'v0.0.42' })],
    ['slurmrestd v0.0.41', () => new SlurmRestWorkloadManager({ baseUrl: t.site.urls.slurmrestd, apiVersion: 'v0.0.41' })],
  ])('%s: blanks the named nodes only, read back as no reason', async (_connector, make: () => WorkloadManager) => {
    const wlm = make();
    // As 24.11 leaves them: our drain, rebooted, resumed, the reason kept.
    await wlm.drainNodes(names.slice(0, 2), claim);
    await wlm.resumeNodes(names.slice(0, 2));
    expect((await wlm.getNodes([names[0]!])).get(names[0]!)).toMatchObject({ base: 'IDLE', flags: [], reason: claim });
    await wlm.clearReasons([names[0]!]);
    const read = await wlm.getNodes(names);
    expect(read.get(names[0]!)!.reason?.trim() || undefined).toBeUndefined();
    expect(read.get(names[1]!)!.reason).toBe(claim);
    expect(read.get(names[2]!)!.reason).toBe('bad dimm');
  });
});
