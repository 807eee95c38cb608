import type { OperationState } from '../core/scheduling';
import type { ControlPlane } from '../control-plane/control-plane';
import { showProgressLine } from './progress-line';

const SHOWN: readonly OperationState[] = ['ACTIVE', 'TRANSITION', 'TODO', 'BLOCKED', 'ERROR'];

/** Logs a running task run on stderr: its node tasks by state, one line per change (--no-live, or no terminal). Reads through the control plane, as any observer would. */
export function showTaskRunProgress(sessions: Pick<ControlPlane, 'progress'>, runId: string, intervalMs = 250): { stop(): Promise<void> } {
  return showProgressLine(async () => {
    const progress = await sessions.progress(runId);
    if (progress?.kind !== 'tasks') return undefined;
    return `tasks on ${progress.nodeCount} nodes: ${SHOWN.map((state) => `${progress.counts[state]} ${state.toLowerCase()}`).join(', ')}`;
  }, intervalMs);
}
