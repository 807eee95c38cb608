import { IllegalStageTransitionError } from '../errors';

import { DEPLOYMENT_STAGES, type DeploymentPhase, type DeploymentStage } from '../deployment-stages';

export { DEPLOYMENT_STAGES, type DeploymentPhase, type DeploymentStage };

const NEXT_STAGES: Readonly<Record<DeploymentStage, readonly DeploymentStage[]>> = {
  NOT_STARTED: ['PREPARED', 'FAILED'],
  PREPARED: ['DEPLOYED', 'FAILED'],
  DEPLOYED: [],
  FAILED: [],
};

/**
 * Whether `from → to` is a legal move. Staying put is not: Shipyard's setter lets a repeat
 * through silently, but here a repeat means a result was applied twice, which we want to see.
 */
export function canTransition(from: DeploymentStage, to: DeploymentStage): boolean {
  return NEXT_STAGES[from].includes(to);
}

/** Returns `to`, or throws IllegalStageTransitionError naming `subject` (e.g. "group ntp-node"). */
export function transitionStage(subject: string, from: DeploymentStage, to: DeploymentStage): DeploymentStage {
  if (!canTransition(from, to)) throw new IllegalStageTransitionError(subject, from, to);
  return to;
}

/** The stage a successful phase leaves a node or group in. */
export function stageAfter(phase: DeploymentPhase): DeploymentStage {
  return phase === 'PREPARE' ? 'PREPARED' : 'DEPLOYED';
}

/**
 * Whether a node at `stage` counts as a success when judging `phase`: after PREPARE a node that
 * is already DEPLOYED (by an earlier group) also counts; after DEPLOY only DEPLOYED does.
 */
export function isSuccessfulAfter(phase: DeploymentPhase, stage: DeploymentStage): boolean {
  return stage === 'DEPLOYED' || (phase === 'PREPARE' && stage === 'PREPARED');
}
