/** The site simulator: a Slurm/BOS/HSM-like site (plus a provisioner) over real HTTP, on simulated time. */
export { simulatorUrls, startSiteSimulator, type RunningSiteSimulator, type SimulatorUrls, type SiteSimulatorOptions } from './http-server';
export { SimClock, SIMULATED_EPOCH, type SimClockOptions, type TimeSource } from '../time/sim-clock';
export { SiteSimulator, type SiteNodeState, type SiteState } from './site-simulator';
export { loadSiteFile, parseSiteDefinition, siteDefinitionSchema, type SiteDefinition, type SiteDefinitionInput } from './site-file';
export { siteStateContract, type SiteStateFile } from './site-state-file';
export { siteProfileFor, type SimulatedTransport } from './site-profile-for';
export { writeHeadNodeStandIns, HEAD_NODE_PROGRAMS, type HeadNodeProgram } from './local-stand-ins';
export { HEAD_NODE_INSTANCE_ID } from './models/head-node';
