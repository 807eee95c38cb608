import type { DeploymentStage } from '../core/group-deployment';
import type { ControlPlane } from '../control-plane/control-plane';
import { showProgressLine } from './progress-line';

const SHOWN_STAGES: readonly DeploymentStage[] = ['DEPLOYED', 'PREPARED', 'FAILED', 'NOT_STARTED'];

/**
 * Logs a running deployment on stderr: groups and nodes by stage, one line per change (--no-live, or
 * no terminal). Reads through the control plane, as any observer would.
 */
export function showDeploymentProgress(sessions: Pick<ControlPlane, 'progress'>, deploymentId: string, intervalMs = 250): { stop(): Promise<void> } {
  return showProgressLine(async () => {
    const progress = await sessions.progress(deploymentId);
    if (progress?.kind !== 'deployment') return undefined;
    const count = (counts: Record<DeploymentStage, number>) => SHOWN_STAGES.map((s) => `${counts[s]} ${s.toLowerCase().replace('_', ' ')}`).join(', ');
    return `groups: ${count(progress.groups)} | nodes: ${count(progress.nodes)}`;
  }, intervalMs);
}
