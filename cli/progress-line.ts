import { repeatRender } from './repeat-render';

/**
 * A one-line progress display on stderr: redrawn in place on a terminal, one line per change
 * elsewhere (CI logs). `line` reads the state (undefined: nothing to show yet).
 */
export function showProgressLine(line: () => Promise<string | undefined>, intervalMs: number): { stop(): Promise<void> } {
  const tty = process.stderr.isTTY === true;
  let last = '';
  const render = async () => {
    const next = await line();
    if (next === undefined || next === last) return;
    last = next;
    process.stderr.write(tty ? `\r\x1b[2K${next}` : `${next}\n`);
  };
  const loop = repeatRender(render, intervalMs);
  return {
    async stop() {
      await loop.stop();
      if (tty && last !== '') process.stderr.write('\n');
    },
  };
}
