import { createSiteClients } from '../../../adapters/site/create-site-clients';
import { startSiteSimulator } from '../../../simulator/http-server';
import { SimClock } from '../../../time/sim-clock';
import { parseSiteDefinition } from '../../../simulator/site-file';

describe('createSiteClients', () => {
  it('builds working clients for every service of the simulator', async () => {
    const site = await startSiteSimulator({
      site: parseSiteDefinition({ nodes: [{ name: 'n1', nid: 1 }], groups: { all: ['n1'] }, bootTemplates: ['t'] }),
      clock: new SimClock({ timeScale: 1000 }),
    });
    try {
      const clients = createSiteClients({
        workloadManagerUrl: site.urls.slurmrestd,
        bootServiceUrl: site.urls.bos,
        inventoryUrl: site.urls.hsm,
        provisionerUrl: site.urls.provisioner,
        slurmApiVersion: 'v0.0.42',
      });
      await expect(clients.workloadManager.getNodes(['n1'])).resolves.toHaveProperty('size', 1);
      await expect(clients.bootService.templateExists('t')).resolves.toBe(true);
      await expect(clients.inventory.getGroupMembers('all')).resolves.toEqual(['n1']);
      await expect(clients.provisioner!.getAction('none')).resolves.toBeUndefined();
    } finally {
      await site.close();
    }
  });

  it('leaves the provisioner out when no URL is given', () => {
    const clients = createSiteClients({ workloadManagerUrl: 'http://wlm', bootServiceUrl: 'http://bos', inventoryUrl: 'http://hsm' });
    expect(clients.provisioner).toBeUndefined();
  });
});
