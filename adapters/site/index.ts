/** HTTP clients of the site services (slurmrestd, BOS v2, HSM v2, the provisioner). */
export { createSiteClients, type SiteClients, type SiteClientsConfig } from './create-site-clients';
export { BosBootService, type BosOptions } from './bos-boot-service';
export { HsmInventory, type HsmOptions } from './hsm-inventory';
export { HttpProvisioner, type HttpProvisionerOptions } from './http-provisioner';
export { SlurmRestWorkloadManager, type SlurmRestOptions } from './slurm-rest-workload-manager';
export { HttpJsonClient, DEFAULT_TIMEOUT_MS, urlPath, type HttpJsonClientOptions, type JsonResponse } from './http-json-client';
export {
  createSiteFromProfile,
  HTTP_CONNECTORS,
  type ConnectorBuilders,
  type ConnectorContext,
  type SiteFromProfile,
  type SiteFromProfileDeps,
} from './site-from-profile';
export { loadSiteProfileFile } from './site-profile-file';
export { resolveSecretReference, type SecretResolution } from './secret-reference';
export { FileInventory, type FileInventoryOptions } from './file-inventory';
