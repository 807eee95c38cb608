import { startSiteSimulator, type RunningSiteSimulator } from '../../simulator/http-server';
import { SimClock } from '../../time/sim-clock';
import { parseSiteDefinition } from '../../simulator/site-file';
import { createSiteClients, type SiteClients } from '../../adapters/site';
import { pollUntil } from '../support/simulator';

const COUNT = 10_000;
const names = Array.from({ length: COUNT }, (_, i) => `x${3000 + Math.floor(i / 64)}c0s${i % 64}b0n0`);

describe('the simulator at 10,000 nodes', () => {
  let site: RunningSiteSimulator;
  let clients: SiteClients;

  beforeAll(async () => {
    site = await startSiteSimulator({
      site: parseSiteDefinition({
        // Every tenth node runs a job that outlasts the test: rebooting it must kill the job.
        nodes: names.map((name, i) => ({ name, nid: i, wlm: i % 10 === 0 ? { state: 'ALLOCATED', busySeconds: 365 * 86400 } : undefined })),
        groups: { compute: names },
        bootTemplates: ['cos-2.4'],
        timing: { bootSeconds: 30, returnSeconds: 10 },
      }),
      // 30 simulated seconds of boot take 30 ms.
      clock: new SimClock({ timeScale: 1000 }),
    });
    clients = createSiteClients({ workloadManagerUrl: site.urls.slurmrestd, bootServiceUrl: site.urls.bos, inventoryUrl: site.urls.hsm });
  });
  afterAll(() => site.close());

  it('reboots every node through one boot session and reports each outcome', async () => {
    const requestedAt = site.simulator.clock.now();
    // BOS answers the create with the pending session, before it has listed its components.
    const created = await clients.bootService.createSession({ name: 'all', operation: 'reboot', templateName: 'cos-2.4', limit: { label: 'compute' } });
    expect(created.status).toBe('running');

    const done = await pollUntil(async () => {
      const session = await clients.bootService.getSession('all');
      return session?.status === 'complete' ? session : undefined;
    });
    expect(Object.values(done.nodes).filter((o) => o === 'succeeded')).toHaveLength(COUNT);

    const back = await pollUntil(async () => {
      const nodes = await clients.workloadManager.getNodes(names);
      return [...nodes.values()].every((n) => n.base === 'IDLE') ? nodes : undefined;
    });
    expect(back.size).toBe(COUNT);
    for (const node of back.values()) {
      expect(node.flags).toEqual([]);
      expect(node.bootTime).toBeGreaterThanOrEqual(requestedAt);
    }

    const state = site.state();
    expect(state.violations).toEqual([]);
    const nodes = Object.values(state.nodes);
    expect(nodes.every((n) => n.bootCount === 1)).toBe(true);
    expect(nodes.reduce((sum, n) => sum + n.killedJobs, 0)).toBe(COUNT / 10);
  });
});
