import type { Provisioner } from '../../ports/provisioner';
import type { Site } from '../../ports/site';
import { BosBootService } from './bos-boot-service';
import { HsmInventory } from './hsm-inventory';
import { HttpProvisioner } from './http-provisioner';
import { NameMappedWorkloadManager, NidNameMap } from './node-name-map';
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
  /** Slurm's node names: 'same' (default) or a pattern over HSM's NID such as CSM's `nid{nid:06}` (core/site/node-names.ts). */
  nodeNames?: string;
  /** Check HSM member ids as xnames (default true: HSM accepts nothing else). */
  xnames?: boolean;
  /** The clock the name map's refresh is timed by; default the system's. */
  now?: () => number;
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
  const slurm = new SlurmRestWorkloadManager({
    baseUrl: config.workloadManagerUrl,
    apiVersion: config.slurmApiVersion,
    userName: config.slurmUserName,
    token: config.slurmToken,
    timeoutMs,
  });
  const inventory = new HsmInventory({
    baseUrl: config.inventoryUrl,
    bearerToken,
    timeoutMs,
    ...(config.xnames !== undefined ? { xnames: config.xnames } : {}),
  });
  const nodeNames = config.nodeNames && config.nodeNames !== 'same' ? new NidNameMap(inventory, config.nodeNames, config.now) : undefined;
  return {
    workloadManager: nodeNames ? new NameMappedWorkloadManager(slurm, nodeNames) : slurm,
    ...(nodeNames ? { nodeNames } : {}),
    bootService: new BosBootService({ baseUrl: config.bootServiceUrl, bearerToken, timeoutMs }),
    inventory,
    ...(config.provisionerUrl ? { provisioner: new HttpProvisioner({ baseUrl: config.provisionerUrl, bearerToken, timeoutMs }) } : {}),
  };
}
