import type { DeploymentStage } from '../core/group-deployment';
import type { RolloutSessions } from '../engine/runtime';
import { repeatRender } from './repeat-render';

const SHOWN_STAGES: readonly DeploymentStage[] = ['DEPLOYED', 'PREPARED', 'FAILED', 'NOT_STARTED'];

/**
 * Shows a running deployment on stderr: groups and nodes by stage, redrawn on a terminal, one line
 * per change elsewhere (CI logs). Reads through the facade, as any observer would.
 */
export function showDeploymentProgress(sessions: Pick<RolloutSessions, 'progress'>, deploymentId: string, intervalMs = 250): { stop(): Promise<void> } {
  const tty = process.stderr.isTTY === true;
  let last = '';
  const render = async () => {
    const progress = await sessions.progress(deploymentId);
    if (progress?.kind !== 'deployment') return;
    const count = (counts: Record<DeploymentStage, number>) => SHOWN_STAGES.map((s) => `${counts[s]} ${s.toLowerCase().replace('_', ' ')}`).join(', ');
    const line = `groups: ${count(progress.groups)} | nodes: ${count(progress.nodes)}`;
    if (line === last) return;
    last = line;
    process.stderr.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
  };
  const loop = repeatRender(render, intervalMs);
  return {
    async stop() {
      await loop.stop();
      if (tty) process.stderr.write('\n');
    },
  };
}
