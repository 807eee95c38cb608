import type { Provisioner } from '../../ports/provisioner';
import type { Site } from '../../ports/site';
import { BosBootService } from './bos-boot-service';
import { HsmInventory } from './hsm-inventory';
import { HttpProvisioner } from './http-provisioner';
import type { Token } from './secret-token';
import { SlurmRestWorkloadManager } from './slurm-rest-workload-manager';
import type { TaskCommands } from './tasks/site-tasks';

export interface SiteClientsConfig {
  workloadManagerUrl: string;
  bootServiceUrl: string;
  inventoryUrl: string;
  /** Only group deployments need it. */
  provisionerUrl?: string;
  /** Default v0.0.41. */
  slurmApiVersion?: string;
  slurmUserName?: string;
  slurmToken?: Token;
  /** Bearer token for BOS, HSM and the provisioner. */
  bearerToken?: Token;
  /** Per request; default 10 s. */
  timeoutMs?: number;
}

export interface SiteClients extends Site {
  /** Present when `provisionerUrl` was given. */
  provisioner?: Provisioner;
  /** How task-graph commands reach the nodes (a head node's transport); absent: only reboot, drain and resume tasks run. */
  taskCommands?: TaskCommands;
}

/** The HTTP clients of every site service; on the simulator every URL is the simulator's. */
export function createSiteClients(config: SiteClientsConfig): SiteClients {
  const { bearerToken, timeoutMs } = config;
  return {
    workloadManager: new SlurmRestWorkloadManager({
      baseUrl: config.workloadManagerUrl,
      apiVersion: config.slurmApiVersion,
      userName: config.slurmUserName,
      token: config.slurmToken,
      timeoutMs,
    }),
    bootService: new BosBootService({ baseUrl: config.bootServiceUrl, bearerToken, timeoutMs }),
    inventory: new HsmInventory({ baseUrl: config.inventoryUrl, bearerToken, timeoutMs }),
    ...(config.provisionerUrl ? { provisioner: new HttpProvisioner({ baseUrl: config.provisionerUrl, bearerToken, timeoutMs }) } : {}),
  };
}
