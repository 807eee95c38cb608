/**
 * Typed errors of group deployment. Each sets `name` so a Step Functions Catch can match it.
 * Bad strategy documents and node lists are InvalidInputError (../errors), not listed here.
 */
import type { DeploymentPhase, DeploymentStage } from './stages';

/** A group or node asked to move between stages in a way the stage rules forbid. A bug or a replayed result. */
export class IllegalStageTransitionError extends Error {
  override name = 'IllegalStageTransitionError';
  constructor(
    /** "group ntp-node", "node n01", ... */
    readonly subject: string,
    readonly from: DeploymentStage,
    readonly to: DeploymentStage,
  ) {
    super(`${subject} cannot move from ${from} to ${to}`);
  }
}

/** A group name that the deployment plan does not contain. */
export class UnknownDeploymentGroupError extends Error {
  override name = 'UnknownDeploymentGroupError';
  constructor(readonly group: string) {
    super(`no deployment group named '${group}'`);
  }
}

/** A phase result for a group that is not waiting for that phase (not ready, or already past it). */
export class UnexpectedPhaseResultError extends Error {
  override name = 'UnexpectedPhaseResultError';
  constructor(
    readonly group: string,
    readonly phase: DeploymentPhase,
    readonly stage: DeploymentStage,
    reason: string,
  ) {
    super(`group ${group} (${stage}) cannot take a ${phase} result: ${reason}`);
  }
}

/** A final result asked for while groups can still be processed. */
export class DeploymentRunNotFinishedError extends Error {
  override name = 'DeploymentRunNotFinishedError';
  constructor(readonly pendingGroups: readonly string[]) {
    super(`the deployment has groups left to process: ${pendingGroups.join(', ')}`);
  }
}
