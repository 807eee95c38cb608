import type { SiteProfileInput } from '../core/site/site-profile';
import type { SimulatorUrls } from './http-server';
import { HEAD_NODE_INSTANCE_ID } from './models/head-node';

export type SimulatedTransport = 'http' | 'ssm';

/**
 * A site profile that points at a running simulator: its HTTP services (slurmrestd, BOS, HSM, our
 * provisioner API), or its head node over SSM (scontrol, Slurm reboots, Slurm inventory, commands).
 * Either way task-graph commands go through the head node over SSM.
 */
export function siteProfileFor(urls: SimulatorUrls, transport: SimulatedTransport, timeScale: number): SiteProfileInput {
  const common = { simulatedTime: { timeScale, controlUrl: urls.control }, allowInsecureHttp: true };
  const headNode = { type: 'ssm' as const, instanceIds: [HEAD_NODE_INSTANCE_ID], region: 'us-east-1', endpoint: urls.ssm };
  if (transport === 'http') {
    return {
      workloadManager: { type: 'slurmrestd', url: urls.slurmrestd, apiVersion: 'v0.0.41' },
      bootService: { type: 'bos', url: urls.bos },
      inventory: { type: 'hsm', url: urls.hsm },
      provisioner: { type: 'http', url: urls.provisioner },
      // Task-graph commands reach the nodes through the head node (pdsh), over SSM.
      tasks: { transport: headNode },
      ...common,
    };
  }
  return {
    transport: headNode,
    workloadManager: { type: 'scontrol' },
    bootService: { type: 'slurm-reboot', prepareCommand: 'wwctl node set --image {template} {nodes}' },
    inventory: { type: 'slurm' },
    provisioner: { type: 'command', commands: { prepare: 'provision prepare {nodes}', deploy: 'provision deploy {nodes}' } },
    ...common,
  };
}
