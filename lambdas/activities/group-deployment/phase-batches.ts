import { groupRunState, isGroupReady, phaseNodes, phaseWork, plannedGroup, type DeploymentPhase, type PhaseWork } from '../../../core/group-deployment';
import type { RunSnapshot } from './run-state';

export interface PhaseRef {
  deploymentId: string;
  group: string;
  phase: DeploymentPhase;
}

/**
 * The batches of a group's phase, recomputed from the stored plan and state by every step that
 * needs them: they only depend on the group's own nodes, which nothing else changes during the phase.
 */
export function batchesOf({ plan, record }: RunSnapshot, group: string, phase: DeploymentPhase): PhaseWork {
  return phaseWork(phaseNodes(plan, record.state, group, phase), plannedGroup(plan, group).concurrency);
}

/** Whether the group is where the phase starts: ready to prepare, or prepared to deploy. */
export function isPhaseDue({ plan, record }: RunSnapshot, group: string, phase: DeploymentPhase): boolean {
  return phase === 'PREPARE' ? isGroupReady(plan, record.state, group) : groupRunState(record.state, group).stage === 'PREPARED';
}

/** The site action of one batch; named so that a retried start finds the action it already made. */
export function actionName(ref: PhaseRef, batch: number): string {
  return `deploy-${ref.deploymentId}-${ref.group}-${ref.phase.toLowerCase()}-${batch}`;
}
