import type { OperationState } from '../core/scheduling';
import type { RolloutSessions } from '../engine/runtime';
import { repeatRender } from './repeat-render';

const SHOWN: readonly OperationState[] = ['ACTIVE', 'TRANSITION', 'TODO', 'BLOCKED', 'ERROR'];

/**
 * Shows a running task run on stderr: its node tasks by state, redrawn on a terminal, one line per
 * change elsewhere (CI logs). Reads through the facade, as any observer would.
 */
export function showTaskRunProgress(sessions: Pick<RolloutSessions, 'progress'>, runId: string, intervalMs = 250): { stop(): Promise<void> } {
  const tty = process.stderr.isTTY === true;
  let last = '';
  const render = async () => {
    const progress = await sessions.progress(runId);
    if (progress?.kind !== 'tasks') return;
    const line = `tasks on ${progress.nodeCount} nodes: ${SHOWN.map((state) => `${progress.counts[state]} ${state.toLowerCase()}`).join(', ')}`;
    if (line === last) return;
    last = line;
    process.stderr.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
  };
  const loop = repeatRender(render, intervalMs);
  return {
    async stop() {
      await loop.stop();
      if (tty && last !== '') process.stderr.write('\n');
    },
  };
}
