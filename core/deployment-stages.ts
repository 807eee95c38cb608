/** Where a group or a node stands in a deployment, as Shipyard names the stages. */
export const DEPLOYMENT_STAGES = ['NOT_STARTED', 'PREPARED', 'DEPLOYED', 'FAILED'] as const;
export type DeploymentStage = (typeof DEPLOYMENT_STAGES)[number];

/** The two phases a group goes through: prepare its nodes, then deploy them. */
export type DeploymentPhase = 'PREPARE' | 'DEPLOY';
