/**
 * Calls `render` every `intervalMs`, one call at a time (a slow read never overlaps the next), and
 * once more on stop so that the last state shows. Errors of a render are dropped: a progress display
 * must never end the command.
 */
export function repeatRender(render: () => Promise<void>, intervalMs: number): { stop(): Promise<void> } {
  let pending: Promise<void> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    pending = pending.then(render).catch(() => undefined);
  }, intervalMs);
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await pending;
      await render().catch(() => undefined);
    },
  };
}
