import { resolve } from 'node:path';
import type { SiteEventsProfile, TransportProfile } from '../../../core/site/site-profile';
import type { CommandTransport } from '../../../ports/command-transport';
import { FileInventory } from '../file-inventory';
import type { ConnectorBuilders, ConnectorContext } from '../connector-builders';
import { CommandProvisioner, type CommandAction } from './command-provisioner';
import { LocalTransport } from './local-transport';
import { ScontrolWorkloadManager } from './scontrol-workload-manager';
import { SlurmInventory, type GroupMembership } from './slurm-inventory';
import { SlurmRebootBootService, type SlurmRebootSession } from './slurm-reboot-boot-service';
import { SlurmNodeReader } from './slurm-node-reader';
import { SsmTransport } from './ssm-transport';
import { StriggerTriggers } from './strigger-triggers';

/**
 * The command-driven connector builders of one site: scontrol, slurm-reboot, the slurm and file
 * inventories and the command provisioner. Services naming the same transport share one (one SSM
 * client, one set of statistics).
 */
export function commandConnectors(): ConnectorBuilders & {
  transportOf(service: { transport?: TransportProfile }, context: ConnectorContext): CommandTransport;
} {
  const transports = new Map<string, CommandTransport>();
  const transportOf = (service: { transport?: TransportProfile }, context: ConnectorContext): CommandTransport => {
    const config = context.transport(service);
    const key = JSON.stringify(config);
    let transport = transports.get(key);
    if (!transport) {
      transport = commandTransport(config, context);
      transports.set(key, transport);
    }
    return transport;
  };
  const paths = (context: ConnectorContext) => context.profile.commandPaths ?? {};
  // One node reader per transport and commands: the workload manager and slurm-reboot share its version and what it saw.
  const readers = new Map<string, SlurmNodeReader>();
  const readerOf = (service: { transport?: TransportProfile }, context: ConnectorContext): SlurmNodeReader => {
    const { scontrol, sinfo } = paths(context);
    const key = JSON.stringify([context.transport(service), scontrol, sinfo]);
    let reader = readers.get(key);
    if (!reader) {
      reader = new SlurmNodeReader(transportOf(service, context), { ...(scontrol ? { scontrol } : {}), ...(sinfo ? { sinfo } : {}), clock: context.clock });
      readers.set(key, reader);
    }
    return reader;
  };
  return {
    transportOf,
    workloadManager: {
      scontrol: (config, context) => {
        const { scontrol, squeue, strigger } = paths(context);
        return new ScontrolWorkloadManager({
          transport: transportOf(config, context),
          reader: readerOf(config, context),
          // squeue's time left is counted from the site's clock: a `rollout simulate` site's simulated one, not this host's.
          clock: context.clock,
          ...(scontrol ? { scontrol } : {}),
          ...(squeue ? { squeue } : {}),
          ...siteTriggers(config.siteEvents, transportOf(config, context), strigger),
        });
      },
    },
    bootService: {
      // A group-label limit is the profile's inventory's group (hsm, file or slurm), not necessarily a Slurm feature.
      'slurm-reboot': async (config, context) => {
        const transport = transportOf(config, context);
        return new SlurmRebootBootService({
          transport,
          inventory: await context.inventory(),
          ...(config.prepareCommand ? { prepareCommand: config.prepareCommand } : {}),
          clock: context.clock,
          sessions: context.connectorState.records<SlurmRebootSession>('slurm-reboot'),
          reader: readerOf(config, context),
          ...(paths(context).scontrol ? { scontrol: paths(context).scontrol } : {}),
        });
      },
    },
    inventory: {
      slurm: (config, context) => {
        const { sinfo, scontrol } = paths(context);
        const roleKey = context.profile.inventory.type === 'slurm' ? context.profile.inventory.roleKey : undefined;
        return new SlurmInventory({
          transport: transportOf(config, context),
          clock: context.clock,
          // A run keeps its groups' members in the table; a one-off read (the CLI's group check) reads Slurm alone.
          ...(context.hasConnectorState ? { memberships: context.connectorState.records<GroupMembership>('slurm-inventory') } : {}),
          ...(sinfo ? { sinfo } : {}),
          ...(scontrol ? { scontrol } : {}),
          ...(roleKey ? { roleKey } : {}),
        });
      },
      file: (config, context) => new FileInventory({ path: resolve(context.baseDir, config.path) }),
    },
    provisioner: {
      command: (config, context) =>
        new CommandProvisioner({
          transport: transportOf(config, context),
          commands: config.commands,
          actions: context.connectorState.records<CommandAction>('command-provisioner'),
          clock: context.clock,
        }),
    },
  };
}

/** Waits resumed by Slurm's triggers, where the profile has siteEvents: strigger on the same head node as scontrol. */
function siteTriggers(events: SiteEventsProfile | undefined, transport: CommandTransport, strigger: string | undefined): { triggers?: StriggerTriggers } {
  if (!events) return {};
  const backstop = events.backstopSeconds !== undefined ? { backstopSeconds: events.backstopSeconds } : {};
  return { triggers: new StriggerTriggers({ transport, relay: events.relay, ...backstop, ...(strigger ? { strigger } : {}) }) };
}

/** A transport as a profile describes it (a `rollout simulate` site's SSM endpoint is polled fast and signed with anything). */
export function commandTransport(config: TransportProfile, { profile }: Pick<ConnectorContext, 'profile'>): CommandTransport {
  if (config.type === 'local') return new LocalTransport();
  // A `rollout simulate` site answers at once and checks no signature: poll fast, sign with anything.
  const simulated = profile.simulatedTime !== undefined;
  return new SsmTransport({
    instanceIds: config.instanceIds,
    region: config.region,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    ...(config.requestTimeoutSeconds !== undefined ? { requestTimeoutMs: config.requestTimeoutSeconds * 1000 } : {}),
    ...(config.commandNotifications ? { notifiesCommandEnd: true } : {}),
    ...(simulated ? { pollIntervalMs: 2, maxPollIntervalMs: 10, credentials: { accessKeyId: 'simulated', secretAccessKey: 'simulated' } } : {}),
  });
}
