import type { Clock } from '../../../core/clock';
import type { CommandTransport } from '../../../ports/command-transport';
import type { ConnectorState } from '../../../ports/connector-state';
import type { Site } from '../../../ports/site';
import { ScontrolWorkloadManager } from './scontrol-workload-manager';
import { SlurmInventory, type GroupMembership } from './slurm-inventory';
import { SlurmNodeReader } from './slurm-node-reader';
import { SlurmRebootBootService, type SlurmRebootSession } from './slurm-reboot-boot-service';

export interface CommandSiteOptions {
  transport: CommandTransport;
  /** The image-selecting command run before each reboot (slurm-reboot's `prepareCommand`). */
  prepareCommand?: string;
  templates?: readonly string[];
  clock?: Clock;
  /** Where slurm-reboot keeps its boot sessions: the rollout table. */
  connectorState: ConnectorState;
}

/** A plain Slurm site reached by commands alone: scontrol, `scontrol reboot`, partitions and features as groups. */
export function createCommandSite({ transport, prepareCommand, templates, clock, connectorState }: CommandSiteOptions): Site {
  const inventory = new SlurmInventory({ transport, memberships: connectorState.records<GroupMembership>('slurm-inventory'), ...(clock ? { clock } : {}) });
  const sessions = connectorState.records<SlurmRebootSession>('slurm-reboot');
  const reader = new SlurmNodeReader(transport, clock ? { clock } : {});
  return {
    workloadManager: new ScontrolWorkloadManager({ transport, reader, ...(clock ? { clock } : {}) }),
    bootService: new SlurmRebootBootService({
      transport,
      inventory,
      reader,
      ...(prepareCommand ? { prepareCommand } : {}),
      ...(templates ? { templates } : {}),
      ...(clock ? { clock } : {}),
      sessions,
    }),
    inventory,
  };
}
