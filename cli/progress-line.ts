import { repeatRender } from './repeat-render';

/**
 * A one-line progress log on stderr: a line each time it changes. What a command shows with
 * --no-live or without a terminal (a CI log; live-display.ts has the live view). `line` reads the
 * state (undefined: nothing to show yet).
 */
export function showProgressLine(line: () => Promise<string | undefined>, intervalMs: number): { stop(): Promise<void> } {
  let last = '';
  const render = async () => {
    const next = await line();
    if (next === undefined || next === last) return;
    last = next;
    process.stderr.write(`${next}\n`);
  };
  return repeatRender(render, intervalMs);
}
