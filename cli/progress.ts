import cliProgress from 'cli-progress';
import type { RolloutSessions } from '../engine/runtime';
import { repeatRender } from './repeat-render';

/**
 * Shows a running session's progress on stderr: a bar on a terminal, one line per step change
 * elsewhere (CI logs). Reads through the facade, as any second observer would.
 */
export function showSessionProgress(sessions: Pick<RolloutSessions, 'progress'>, upgradeId: string, intervalMs = 250): { stop(): Promise<void> } {
  const tty = process.stderr.isTTY === true;
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          stream: process.stderr,
          format: ' {bar} {value}/{total} nodes | {where} {stage} | upgraded {upgraded} failed {failed}{note}',
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let started = false;
  let lastLine = '';
  let lastMessage: string | undefined;

  const render = async () => {
    const snapshot = await sessions.progress(upgradeId);
    if (snapshot?.kind !== 'upgrade') return;
    const windowText = snapshot.window
      ? `window ${snapshot.window.inFlight} in flight, ${snapshot.window.draining} draining` +
        (snapshot.window.halted ? `, halted (${snapshot.window.halted})` : snapshot.window.waiting ? `, waiting for ${snapshot.window.waiting}` : '')
      : undefined;
    // The newest message, shown as soon as it is posted (e.g. that a group does not exist): the bar carries it, a log gets it once.
    const note = snapshot.message === undefined ? '' : ` | ${snapshot.message.length > 100 ? `${snapshot.message.slice(0, 100)}...` : snapshot.message}`;
    const payload = { ...snapshot, note, step: Math.min(snapshot.step + 1, Math.max(snapshot.steps, 1)), where: windowText ?? `step ${Math.min(snapshot.step + 1, Math.max(snapshot.steps, 1))}/${snapshot.steps}` };
    const done = snapshot.upgraded + snapshot.failed;
    if (bar) {
      if (!started) bar.start(Math.max(snapshot.total, 1), done, payload);
      else bar.update(done, payload);
      bar.setTotal(Math.max(snapshot.total, 1));
      started = true;
    } else {
      const line = `${payload.where} ${snapshot.stage}: ${done}/${snapshot.total} nodes done (upgraded ${snapshot.upgraded}, failed ${snapshot.failed})`;
      if (snapshot.stage === 'STARTING' || line.split(':')[0] !== lastLine.split(':')[0]) {
        if (line !== lastLine) process.stderr.write(`${line}\n`);
        lastLine = line;
      }
      if (snapshot.message !== undefined && snapshot.message !== lastMessage) process.stderr.write(`  ${snapshot.message}\n`);
    }
    lastMessage = snapshot.message;
  };

  const loop = repeatRender(render, intervalMs);
  return {
    async stop() {
      await loop.stop();
      bar?.stop();
    },
  };
}
