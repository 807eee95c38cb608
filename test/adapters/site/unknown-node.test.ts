import { ScontrolWorkloadManager } from '../../../adapters/site/commands/scontrol-workload-manager';
import { SlurmRestWorkloadManager } from '../../../adapters/site/slurm-rest-workload-manager';
import { UnknownNodesError } from '../../../core/errors';
import { decideStartStep } from '../../../core/rolling-upgrade/step-decisions';
import type { WorkloadManager } from '../../../ports/site';
import { nodeNames, nodesOf } from '../../support/simulator';
import { startSsmTestSite, type SsmTestSite } from '../../support/ssm-site';
import { NOW, node, progress, session } from '../../support/upgrade-sessions';

/**
 * Issue 26, item 6: a node Slurm does not know is one answer whatever the connector. Each reads it as
 * absent (slurmrestd of Slurm 24.11's shape: 200, `Failure to query node ghost01`, errno 0; scontrol:
 * `Node ghost01 not found`), and the run's one typed error follows from that:
 * UnknownNodesError, `nodes unknown to the workload-manager: ghost01`, never a site failure retried.
 */
describe('a node Slurm does not know, on every workload-manager connector', () => {
  const names = nodeNames(2);
  let t: SsmTestSite;
  beforeEach(async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names), slurm: { version: '24.11.5' } });
  });
  afterEach(() => t.close());

  it.each([
    ['scontrol over SSM', () => new ScontrolWorkloadManager({ transport: t.transport })],
    ['slurmrestd v0.0.42', () => new SlurmRestWorkloadManager({ baseUrl: t.site.urls.slurmrestd, apiVersion: 'v0.0.42' })],
    ['slurmrestd v0.0.40', () => new SlurmRestWorkloadManager({ baseUrl: t.site.urls.slurmrestd, apiVersion: 'v0.0.40' })],
  ])('%s: absent from the read, and the step refused with UnknownNodesError naming it', async (_connector, make: () => WorkloadManager) => {
    const wlm = make();
    const read = await wlm.getNodes([names[0]!, 'ghost01']);
    expect([...read.keys()]).toEqual([names[0]]);
    const d = decideStartStep({
      session: session(),
      progress: progress(),
      nodes: [node(names[0]!, 0), node('ghost01', 1)],
      observed: { wlm: read, heldByOthers: new Map(), failedMembers: [] },
      now: NOW,
    });
    expect(d.error).toBeInstanceOf(UnknownNodesError);
    expect(d.error!.message).toBe('nodes unknown to the workload-manager: ghost01');
    expect(d.actions).toEqual([]);
  });
});
