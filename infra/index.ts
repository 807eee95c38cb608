/**
 * What a CDK app of your own imports to deploy the rollout workflows (docs/guides/run-as-a-service.md: "Embedding the construct").
 * `loadSiteProfileFile` reads the site connection profile the CLI reads.
 */
export { RolloutWorkflows, type RolloutWorkflowsProps, type SsmTarget } from './constructs/rollout-workflows';
export { RolloutMonitoring, type RolloutMonitoringProps } from './constructs/rollout-monitoring';
export type { CommandEndNotifications } from './constructs/command-end-notifications';
export { RolloutStack, type RolloutStackProps } from './rollout-stack';
export { parseSiteProfile, type SiteProfile, type SiteProfileInput } from '../core/site/site-profile';
export { loadSiteProfileFile } from '../adapters/site/site-profile-file';
