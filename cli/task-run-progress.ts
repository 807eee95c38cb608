import type { OperationState } from '../core/scheduling';
import type { RolloutSessions } from '../control-plane/runtime';
import { showProgressLine } from './progress-line';

const SHOWN: readonly OperationState[] = ['ACTIVE', 'TRANSITION', 'TODO', 'BLOCKED', 'ERROR'];

/** Shows a running task run on stderr: its node tasks by state. Reads through the facade, as any observer would. */
export function showTaskRunProgress(sessions: Pick<RolloutSessions, 'progress'>, runId: string, intervalMs = 250): { stop(): Promise<void> } {
  return showProgressLine(async () => {
    const progress = await sessions.progress(runId);
    if (progress?.kind !== 'tasks') return undefined;
    return `tasks on ${progress.nodeCount} nodes: ${SHOWN.map((state) => `${progress.counts[state]} ${state.toLowerCase()}`).join(', ')}`;
  }, intervalMs);
}
