import type { DeploymentStore } from '../ports/deployment-store';
import { repeatRender } from './repeat-render';

/**
 * Shows a running deployment on stderr: groups and nodes by stage, redrawn on a terminal, one line
 * per change elsewhere (CI logs). Reads the store, as any observer would.
 */
export function showDeploymentProgress(store: DeploymentStore, deploymentId: string, intervalMs = 250): { stop(): Promise<void> } {
  const tty = process.stderr.isTTY === true;
  let last = '';
  const render = async () => {
    const record = await store.getDeployment(deploymentId);
    if (!record) return;
    const count = (stages: Iterable<string>) => {
      const counts: Record<string, number> = {};
      for (const stage of stages) counts[stage] = (counts[stage] ?? 0) + 1;
      return ['DEPLOYED', 'PREPARED', 'FAILED', 'NOT_STARTED'].map((s) => `${(counts[s] ?? 0)} ${s.toLowerCase().replace('_', ' ')}`).join(', ');
    };
    const line = `groups: ${count(Object.values(record.state.groups).map((g) => g.stage))} | nodes: ${count(Object.values(record.state.nodes))}`;
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
