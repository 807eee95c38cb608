import { createSiteClients, type SiteClients, type SiteClientsConfig } from '../adapters/site';
import type { RunningSiteSimulator } from '../simulator/http-server';

/**
 * The HTTP clients of a simulated site, as the embedded default builds them: a CSM-style site's
 * names are mapped (nids in Slurm, xnames in HSM and BOS) and its HSM member ids checked as xnames;
 * any other simulated site has one name per node, not necessarily an xname (`n001`, `ntp01`).
 * `config` overrides (a short timeout, say).
 */
export function simulatedSiteClients(running: RunningSiteSimulator, config: Partial<SiteClientsConfig> = {}): SiteClients {
  const { names } = running.simulator;
  return createSiteClients({
    workloadManagerUrl: running.urls.slurmrestd,
    bootServiceUrl: running.urls.bos,
    inventoryUrl: running.urls.hsm,
    provisionerUrl: running.urls.provisioner,
    nodeNames: names.pattern,
    xnames: names.mapped,
    now: () => running.simulator.clock.now(),
    ...config,
  });
}
