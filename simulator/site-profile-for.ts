import type { SiteProfileInput } from '../core/site/site-profile';
import type { SiteDefinition } from './site-file';
import type { SimulatorUrls } from './http-server';
import type { HeadNodeProgram } from './local-stand-ins';
import { HEAD_NODE_INSTANCE_ID } from './models/head-node';

export type SimulatedTransport = 'http' | 'ssm' | 'local';

/**
 * A site profile that points at a running simulator: its HTTP services (slurmrestd, BOS, HSM, our
 * provisioner API), or its head node over SSM (scontrol, Slurm reboots, Slurm inventory, commands),
 * or the same commands run on this host (`local`) by the stand-in programs at `programs`
 * (local-stand-ins.ts), named by absolute path. Either way task-graph commands go through the head
 * node over SSM.
 */
export function siteProfileFor(
  urls: SimulatorUrls,
  transport: SimulatedTransport,
  timeScale: number,
  programs?: Record<HeadNodeProgram, string>,
  site?: Pick<SiteDefinition, 'csm'>,
  slurmrestdVersions?: readonly string[],
): SiteProfileInput {
  const common = { simulatedTime: { timeScale, controlUrl: urls.control }, allowInsecureHttp: true };
  const headNode = { type: 'ssm' as const, instanceIds: [HEAD_NODE_INSTANCE_ID], region: 'us-east-1', endpoint: urls.ssm };
  if (transport === 'http') {
    return {
      workloadManager: { type: 'slurmrestd', url: urls.slurmrestd, apiVersion: restdVersionFor(slurmrestdVersions) },
      bootService: { type: 'bos', url: urls.bos },
      // A CSM-style site: HSM's xnames, Slurm's nid names. Elsewhere HSM's API serves the site's own names (not xnames), as Slurm does.
      inventory: { type: 'hsm', url: urls.hsm, ...(site?.csm ? {} : { xnames: false }) },
      nodeNames: { workloadManager: site?.csm?.slurmNodeNames ?? 'same' },
      provisioner: { type: 'http', url: urls.provisioner },
      // Task-graph commands reach the nodes through the head node (pdsh), over SSM.
      tasks: { transport: headNode },
      ...common,
    };
  }
  if (transport === 'local' && !programs) throw new Error('a local-transport profile names the stand-in programs it runs');
  const run = (program: HeadNodeProgram) => (transport === 'local' ? programs![program] : program);
  return {
    transport: transport === 'local' ? { type: 'local' } : headNode,
    ...(transport === 'local'
      ? { commandPaths: { scontrol: run('scontrol'), sinfo: run('sinfo'), squeue: run('squeue'), strigger: run('strigger') }, tasks: { transport: headNode } }
      : {}),
    workloadManager: { type: 'scontrol' },
    // --yes: Warewulf asks for confirmation otherwise, and a command over SSM has no terminal to answer it.
    bootService: { type: 'slurm-reboot', prepareCommand: `${run('wwctl')} node set --yes --image {template} {nodes}` },
    inventory: { type: 'slurm' },
    provisioner: { type: 'command', commands: { prepare: `${run('provision')} prepare {nodes}`, deploy: `${run('provision')} deploy {nodes}` } },
    ...common,
  };
}

/** The versions a profile's slurmrestd connector speaks, the one it is given first when the site serves it. */
const PROFILE_RESTD_VERSIONS = ['v0.0.41', 'v0.0.42', 'v0.0.40'];

/**
 * The slurmrestd version to name for a simulated Slurm that serves `served` (all of them when not
 * said). A release whose slurmrestd cannot update nodes (22.05's v0.0.36-38) has none: its profile
 * must reach Slurm by commands.
 */
function restdVersionFor(served: readonly string[] | undefined): string {
  if (served === undefined) return PROFILE_RESTD_VERSIONS[0]!;
  const version = PROFILE_RESTD_VERSIONS.find((v) => served.includes(v));
  if (!version)
    throw new Error(
      `the simulated Slurm's slurmrestd serves ${served.join(', ')}, none of which a profile's slurmrestd connector speaks (${PROFILE_RESTD_VERSIONS.join(', ')}): use a command transport (ssm or local), which runs scontrol`,
    );
  return version;
}
