/**
 * Connectors that reach the site by running commands on its head node (SSM Run Command or locally):
 * what a site connection profile selects with `transport: {type: ssm | local}`.
 *
 *   new SsmTransport({ instanceIds, region?, endpoint?, credentials?, timeoutSeconds? })
 *   new LocalTransport({ timeoutSeconds?, env? })
 *   new ScontrolWorkloadManager({ transport, scontrol?, showChunk?, triggers? })
 *   new StriggerTriggers({ transport, relay, backstopSeconds?, strigger? })
 *   new CommandProvisioner({ transport, commands: {prepare, deploy}, timeoutSeconds?, actions })
 *   new SlurmInventory({ transport, sinfo?, scontrol? })
 *   new SlurmRebootBootService({ transport, inventory, prepareCommand?, templates?, reason?, scontrol?, clock?, sessions })
 */
export { CommandTransportError } from '../../../ports/command-transport';
export { LocalTransport, type LocalTransportOptions } from './local-transport';
export { SsmTransport, SSM_OUTPUT_LIMIT, type SsmTransportOptions, type SsmTransportStats } from './ssm-transport';
export { ScontrolWorkloadManager, type ScontrolOptions } from './scontrol-workload-manager';
export { StriggerTriggers, type StriggerTriggersOptions } from './strigger-triggers';
export { SlurmRebootBootService, type SlurmRebootOptions, type SlurmRebootSession } from './slurm-reboot-boot-service';
export { CommandProvisioner, type CommandProvisionerOptions, type CommandAction } from './command-provisioner';
export { createCommandSite, type CommandSiteOptions } from './command-site';
export { SlurmInventory, type SlurmInventoryOptions } from './slurm-inventory';
export { shellQuote, shellCommand, fillTemplate } from './shell-quote';
