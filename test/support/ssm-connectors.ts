import type { SiteClients } from '../../adapters/site';
import { CommandProvisioner, createCommandSite, SsmTransport } from '../../adapters/site/commands';
import type { RunningSiteSimulator } from '../../simulator';
import { HEAD_NODE_INSTANCE_ID } from '../../simulator/models/head-node';

export interface SsmConnectors {
  /** For EmbeddedRuntime's `connectors`: scontrol + slurm-reboot + slurm inventory + command provisioner over the simulator's SSM endpoint. */
  connect(simulator: RunningSiteSimulator): SiteClients;
  /** The transport, once connected: its `stats` count SSM calls and output bytes. */
  transport(): SsmTransport;
}

/**
 * The command-driven connectors a `--transport ssm` profile selects, built by hand (the profile
 * factory builds the same). Polls every few real milliseconds: the simulated site runs 1000x faster.
 */
export function ssmConnectors({ templates, prepareCommand }: { templates?: readonly string[]; prepareCommand?: string } = {}): SsmConnectors {
  let transport: SsmTransport | undefined;
  return {
    connect(simulator) {
      transport = new SsmTransport({
        instanceIds: [HEAD_NODE_INSTANCE_ID],
        region: 'us-east-1',
        endpoint: simulator.url,
        credentials: { accessKeyId: 'sim', secretAccessKey: 'sim' },
        pollIntervalMs: 2,
        maxPollIntervalMs: 10,
      });
      const site = createCommandSite({ transport, templates, prepareCommand, clock: { now: () => simulator.simulator.clock.now() } });
      // The commands `rollout simulate --profile-out --transport ssm` writes.
      const provisioner = new CommandProvisioner({ transport, commands: { prepare: 'provision prepare {nodes}', deploy: 'provision deploy {nodes}' } });
      return { ...site, provisioner };
    },
    transport() {
      if (!transport) throw new Error('not connected yet');
      return transport;
    },
  };
}
